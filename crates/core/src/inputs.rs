//! The inputs of a packed task (`Mode::Packed`), in order: a list of
//! inputs, or records lying back to back in one slice, cut where the task
//! runs.
//!
//! A list costs the thread that builds it a value per input. `postRecords()`
//! over one binary needs none: the worker cuts each record out of the span
//! when it gets to it, so the JS thread hands over a slice and a length (or
//! the records' ends) per task, not an `Input` per record.

use std::borrow::Cow;

use crate::input::{Input, RawSlice};

/// A packed task's inputs; every one of them lies within what was handed
/// over (checked when made).
#[derive(Debug, Clone)]
pub struct Inputs(Shape);

#[derive(Debug, Clone)]
enum Shape {
    /// Each an input of its own.
    List(Box<[Input]>),
    /// `count` records of `each` bytes from the start of `span`.
    Even { span: RawSlice, each: usize, count: usize },
    /// Records from the start of `span`, the i-th ending at byte `ends[i]`
    /// of it; ascending, the last at most `span.len()`.
    Cut { span: RawSlice, ends: Box<[usize]> },
}

impl Inputs {
    /// Each of `inputs`, in order.
    pub fn list(inputs: Box<[Input]>) -> Inputs {
        Inputs(Shape::List(inputs))
    }

    /// `count` records of `each` bytes, back to back from the start of
    /// `span`; `None` when they do not fit in it.
    pub fn even(span: RawSlice, each: usize, count: usize) -> Option<Inputs> {
        (each.checked_mul(count)? <= span.len()).then_some(Inputs(Shape::Even {
            span,
            each,
            count,
        }))
    }

    /// Records back to back from the start of `span`, record `i` ending at
    /// byte `ends[i]`; `None` unless the ends ascend (records may be empty)
    /// and the last is within `span`.
    pub fn cut(span: RawSlice, ends: Box<[usize]>) -> Option<Inputs> {
        let ascending = ends.windows(2).all(|w| w[0] <= w[1]);
        let within = ends.last().is_none_or(|&last| last <= span.len());
        (ascending && within).then_some(Inputs(Shape::Cut { span, ends }))
    }

    /// How many inputs.
    pub fn len(&self) -> usize {
        match &self.0 {
            Shape::List(list) => list.len(),
            Shape::Even { count, .. } => *count,
            Shape::Cut { ends, .. } => ends.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Input `i`: a list's own, or a record's bytes in place.
    ///
    /// # Panics
    /// Unless `i < self.len()`.
    pub fn get(&self, i: usize) -> Cow<'_, Input> {
        match &self.0 {
            Shape::List(list) => Cow::Borrowed(&list[i]),
            Shape::Even { span, each, count } => {
                assert!(i < *count, "input {i} of {count}");
                Cow::Owned(Input::One(span.range(i * each, (i + 1) * each)))
            }
            Shape::Cut { span, ends } => {
                let from = if i == 0 { 0 } else { ends[i - 1] };
                Cow::Owned(Input::One(span.range(from, ends[i])))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(inputs: &Inputs) -> Vec<Vec<u8>> {
        (0..inputs.len()).map(|i| inputs.get(i).parts().concat()).collect()
    }

    #[test]
    fn even_records_are_cut_in_place() {
        let span = RawSlice::from_static(b"abcdefg");
        let inputs = Inputs::even(span, 3, 2).unwrap();
        assert_eq!(bytes(&inputs), [b"abc".to_vec(), b"def".to_vec()]);
        let Cow::Owned(Input::One(slice)) = inputs.get(1) else { panic!("a slice") };
        assert_eq!(slice.as_slice().as_ptr(), span.as_slice()[3..].as_ptr(), "not a copy");
        assert_eq!(Inputs::even(span, 0, 5).unwrap().len(), 5);
        assert!(Inputs::even(span, 3, 3).is_none(), "past the span");
        assert!(Inputs::even(span, usize::MAX, 2).is_none(), "overflow");
    }

    #[test]
    fn cut_records_end_where_told() {
        let span = RawSlice::from_static(b"abcdef");
        let inputs = Inputs::cut(span, vec![1, 1, 4, 6].into()).unwrap();
        assert_eq!(bytes(&inputs), [b"a".to_vec(), vec![], b"bcd".to_vec(), b"ef".to_vec()]);
        assert!(Inputs::cut(span, vec![2, 1].into()).is_none(), "descending");
        assert!(Inputs::cut(span, vec![7].into()).is_none(), "past the span");
        assert!(Inputs::cut(span, Box::new([])).unwrap().is_empty());
    }

    #[test]
    fn a_list_lends_its_own() {
        let inputs = Inputs::list(vec![Input::Owned(b"xy".to_vec())].into_boxed_slice());
        assert!(matches!(inputs.get(0), Cow::Borrowed(_)));
        assert_eq!(bytes(&inputs), [b"xy".to_vec()]);
    }
}
