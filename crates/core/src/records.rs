//! One input cut into records (`postRecords()`): each record's bytes as an
//! input of its own, read in place as the whole is, so that many small
//! records lying back to back in one binary need no object each.

use crate::input::{Input, RawSlice};

/// An input and where each of its parts ends, to find a record in it.
pub struct Records<'a> {
    input: &'a Input,
    /// The end of each part of an `Input::Many`, ascending (empty for the others).
    ends: Vec<usize>,
    len: usize,
}

impl<'a> Records<'a> {
    pub fn new(input: &'a Input) -> Records<'a> {
        let mut ends = Vec::new();
        if let Input::Many(parts) = input {
            let mut at = 0;
            ends.extend(parts.iter().map(|part| {
                at += part.len();
                at
            }));
        }
        Records { input, ends, len: input.len() }
    }

    /// The input's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the input has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes `from..to` of the input as an input of their own (the parts
    /// of an `Input::Many` they span, in place); `None` unless
    /// `from <= to <= len`.
    pub fn get(&self, from: usize, to: usize) -> Option<Input> {
        if from > to || to > self.len {
            return None;
        }
        Some(match self.input {
            Input::One(slice) => Input::One(slice.range(from, to)),
            Input::Owned(bytes) => Input::Owned(bytes[from..to].to_vec()),
            Input::Many(parts) => {
                // The first part that ends past `from`, and on to `to`.
                let first = self.ends.partition_point(|&end| end <= from);
                let mut start = if first == 0 { 0 } else { self.ends[first - 1] };
                let mut pieces = Vec::new();
                for (part, &end) in parts[first..].iter().zip(&self.ends[first..]) {
                    if start >= to {
                        break;
                    }
                    let (a, b) = (from.max(start), to.min(end));
                    if a < b {
                        pieces.push(part.range(a - start, b - start));
                    }
                    start = end;
                }
                match pieces.len() {
                    0 => Input::One(RawSlice::from_static(b"")),
                    1 => Input::One(pieces[0]),
                    _ => Input::Many(pieces.into_boxed_slice()),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(input: &Input) -> Vec<u8> {
        input.parts().concat()
    }

    fn many(parts: &[&'static [u8]]) -> Input {
        Input::Many(parts.iter().map(|p| RawSlice::from_static(p)).collect())
    }

    #[test]
    fn every_range_of_every_shape_reads_as_the_whole_does() {
        let whole: &[u8] = b"abcdefghij";
        let shapes = [
            Input::One(RawSlice::from_static(b"abcdefghij")),
            Input::Owned(whole.to_vec()),
            many(&[b"abc", b"", b"defg", b"h", b"ij"]),
            many(&[b"", b"abcdefghij", b""]),
        ];
        for input in &shapes {
            let records = Records::new(input);
            assert_eq!(records.len(), whole.len());
            for from in 0..=whole.len() {
                for to in from..=whole.len() {
                    let got = records.get(from, to).unwrap();
                    assert_eq!(bytes(&got), &whole[from..to], "{from}..{to} of {input:?}");
                    assert_eq!(got.len(), to - from);
                }
            }
            assert!(records.get(0, whole.len() + 1).is_none());
            assert!(records.get(5, 4).is_none());
        }
    }

    #[test]
    fn a_record_within_one_part_is_that_part_in_place() {
        let input = many(&[b"abc", b"defg"]);
        let records = Records::new(&input);
        let Some(Input::One(slice)) = records.get(4, 6) else { panic!("one slice") };
        assert_eq!(slice.as_slice(), b"ef");
        let Some(Input::Many(pieces)) = records.get(2, 5) else { panic!("two pieces") };
        assert_eq!(pieces.len(), 2);
    }

    #[test]
    fn an_empty_input_has_only_empty_records() {
        let input = many(&[]);
        let records = Records::new(&input);
        assert!(records.is_empty());
        assert_eq!(records.get(0, 0).unwrap().len(), 0);
        assert!(records.get(0, 1).is_none());
    }
}
