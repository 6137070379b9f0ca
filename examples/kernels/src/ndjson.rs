//! Newline-delimited JSON (NDJSON, JSON Lines): checks that every line is
//! one JSON value (RFC 8259, UTF-8), streaming, and returns the number of
//! records as a little-endian uint64. Blank lines are not records. The
//! first bad record fails the task with `ERR_NDJSON_INVALID`, naming the
//! record, its line and the byte where it goes wrong; a record nested deeper
//! than `maxDepth` fails with `ERR_NDJSON_TOO_DEEP`, one longer than
//! `maxRecordBytes` with `ERR_NDJSON_RECORD_TOO_LARGE`.
//!
//! Lines are validated where they lie in the input; only a line split
//! between two chunks is copied (to join its halves). The parser keeps its
//! nesting on a heap stack, so depth never grows the thread's stack.

use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Param, Transform, Values};

pub struct Ndjson;

pub struct Limits {
    max_depth: usize,
    max_record: usize,
}

impl Kernel for Ndjson {
    const NAME: &'static std::ffi::CStr = c"example/ndjson";
    const PARAMS: &'static [Param] =
        &[Param::integer(c"maxDepth", 1, 100_000), Param::integer(c"maxRecordBytes", 1, 1 << 31)];
    type Params = Limits;
    type State = Validating;

    fn params(values: &Values<'_>) -> Result<Limits, Error> {
        Ok(Limits {
            max_depth: values.integer("maxDepth").unwrap_or(128) as usize,
            max_record: values.integer("maxRecordBytes").unwrap_or(16 << 20) as usize,
        })
    }

    fn start(limits: &Limits, _: Option<u64>) -> Result<Validating, Error> {
        Ok(Validating {
            max_depth: limits.max_depth,
            max_record: limits.max_record,
            pending: Vec::new(),
            line: 0,
            records: 0,
            stack: Vec::new(),
            since_check: 0,
        })
    }
}

pub struct Validating {
    max_depth: usize,
    max_record: usize,
    /// The start of a line the last chunk ended inside.
    pending: Vec<u8>,
    /// Lines seen (complete ones).
    line: u64,
    records: u64,
    /// The parser's open containers (reused between lines).
    stack: Vec<u8>,
    /// Bytes validated since the last cancellation check.
    since_check: usize,
}

/// Bytes validated between two cancellation checks.
const CHECK_EVERY: usize = 1 << 20;

impl Validating {
    fn line_done(&mut self, line: &[u8], cx: &Context<'_>) -> Result<(), Error> {
        self.line += 1;
        if line.len() > self.max_record {
            return Err(self.too_large(line.len()));
        }
        self.since_check += line.len();
        if self.since_check >= CHECK_EVERY {
            self.since_check = 0;
            cx.check()?;
        }
        match validate(line, self.max_depth, &mut self.stack) {
            Ok(true) => {
                self.records += 1;
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(Bad::TooDeep(at)) => Err(Error::new(
                "ERR_NDJSON_TOO_DEEP",
                format!(
                    "record {} (line {}) nests deeper than maxDepth ({}) at byte {}",
                    self.records + 1,
                    self.line,
                    self.max_depth,
                    at + 1
                ),
            )),
            Err(Bad::Syntax(at, why)) => Err(Error::new(
                "ERR_NDJSON_INVALID",
                format!(
                    "record {} (line {}): {why} at byte {}",
                    self.records + 1,
                    self.line,
                    at + 1
                ),
            )),
        }
    }

    fn too_large(&self, len: usize) -> Error {
        Error::new(
            "ERR_NDJSON_RECORD_TOO_LARGE",
            format!(
                "record {} (line {}) is longer than maxRecordBytes ({}): at least {len} bytes",
                self.records + 1,
                self.line + 1,
                self.max_record
            ),
        )
    }
}

impl Transform for Validating {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line, after) = (&rest[..end], &rest[end + 1..]);
            if self.pending.is_empty() {
                self.line_done(line, cx)?;
            } else {
                let mut joined = std::mem::take(&mut self.pending);
                joined.extend_from_slice(line);
                self.line_done(&joined, cx)?;
                joined.clear();
                self.pending = joined;
            }
            rest = after;
        }
        if self.pending.len() + rest.len() > self.max_record {
            self.line += 1;
            let e = self.too_large(self.pending.len() + rest.len());
            return Err(e);
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        if !self.pending.is_empty() {
            let last = std::mem::take(&mut self.pending);
            self.line_done(&last, cx)?;
        }
        out.write(&self.records.to_le_bytes())
    }
}

enum Bad {
    /// At byte offset, why.
    Syntax(usize, &'static str),
    TooDeep(usize),
}

/// Whether `line` is one JSON value (`Ok(true)`) or blank (`Ok(false)`).
fn validate(line: &[u8], max_depth: usize, stack: &mut Vec<u8>) -> Result<bool, Bad> {
    if let Err(e) = std::str::from_utf8(line) {
        return Err(Bad::Syntax(e.valid_up_to(), "invalid UTF-8"));
    }
    let mut p = Parser { b: line, at: 0 };
    p.skip_ws();
    if p.at == line.len() {
        return Ok(false);
    }
    stack.clear();
    'value: loop {
        // A value starts here.
        match p.peek() {
            Some(open @ (b'{' | b'[')) => {
                p.at += 1;
                p.skip_ws();
                let close = if open == b'{' { b'}' } else { b']' };
                if p.peek() == Some(close) {
                    p.at += 1;
                } else {
                    if stack.len() == max_depth {
                        return Err(Bad::TooDeep(p.at - 1));
                    }
                    stack.push(open);
                    if open == b'{' {
                        p.key()?;
                    }
                    continue 'value;
                }
            }
            Some(b'"') => p.string()?,
            Some(b't') => p.literal(b"true")?,
            Some(b'f') => p.literal(b"false")?,
            Some(b'n') => p.literal(b"null")?,
            Some(b'-' | b'0'..=b'9') => p.number()?,
            Some(_) => return Err(Bad::Syntax(p.at, "unexpected character")),
            None => return Err(Bad::Syntax(p.at, "unexpected end of the record")),
        }
        // After a value: close containers, or a comma and the next value.
        loop {
            p.skip_ws();
            let Some(&open) = stack.last() else {
                return if p.at == line.len() {
                    Ok(true)
                } else {
                    Err(Bad::Syntax(p.at, "unexpected data after the value"))
                };
            };
            let close = if open == b'{' { b'}' } else { b']' };
            match p.peek() {
                Some(b',') => {
                    p.at += 1;
                    p.skip_ws();
                    if open == b'{' {
                        p.key()?;
                    }
                    continue 'value;
                }
                Some(c) if c == close => {
                    p.at += 1;
                    stack.pop();
                }
                Some(_) => {
                    return Err(Bad::Syntax(
                        p.at,
                        if open == b'{' { "expected ',' or '}'" } else { "expected ',' or ']'" },
                    ))
                }
                None => return Err(Bad::Syntax(p.at, "unexpected end of the record")),
            }
        }
    }
}

struct Parser<'a> {
    b: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// `"key"`, whitespace, `:`, whitespace.
    fn key(&mut self) -> Result<(), Bad> {
        if self.peek() != Some(b'"') {
            return Err(Bad::Syntax(self.at, "expected a string key"));
        }
        self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(Bad::Syntax(self.at, "expected ':'"));
        }
        self.at += 1;
        self.skip_ws();
        Ok(())
    }

    fn string(&mut self) -> Result<(), Bad> {
        self.at += 1;
        loop {
            match self.peek() {
                None => return Err(Bad::Syntax(self.at, "unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                    return Err(Bad::Syntax(self.at, "invalid \\u escape"));
                                }
                                self.at += 1;
                            }
                        }
                        _ => return Err(Bad::Syntax(self.at, "invalid escape")),
                    }
                }
                Some(c) if c < 0x20 => {
                    return Err(Bad::Syntax(self.at, "control character in a string"))
                }
                Some(_) => self.at += 1,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Bad> {
        if self.b[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Bad::Syntax(self.at, "unexpected character"))
        }
    }

    fn digits(&mut self) -> usize {
        let from = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - from
    }

    fn number(&mut self) -> Result<(), Bad> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Bad::Syntax(self.at, "invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(Bad::Syntax(self.at, "invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(Bad::Syntax(self.at, "invalid number"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> bool {
        validate(s.as_bytes(), 8, &mut Vec::new()).is_ok_and(|r| r)
    }

    #[test]
    fn accepts_json_values_and_refuses_the_rest() {
        for good in [
            "{}",
            "[]",
            "0",
            "-0.5e+3",
            "\"a\\u00e9\\n\"",
            "{\"a\":[1,{\"b\":null}],\"c\":true}",
            " [ 1 , 2 ] \r",
            "\"é\"",
        ] {
            assert!(ok(good), "{good}");
        }
        for bad in [
            "{",
            "[1,]",
            "{\"a\"}",
            "01",
            "1.",
            "tru",
            "\"\\x\"",
            "{} {}",
            "[1 2]",
            "{a:1}",
            "\"\u{1}\"",
            "-",
            "1e",
        ] {
            assert!(!ok(bad), "{bad}");
        }
        assert_eq!(validate(b"  \t", 8, &mut Vec::new()).ok(), Some(false), "blank");
        assert!(matches!(
            validate(b"[[[[[[[[[1]]]]]]]]]", 8, &mut Vec::new()),
            Err(Bad::TooDeep(8))
        ));
        assert!(matches!(
            validate(b"\"\xff\"", 8, &mut Vec::new()),
            Err(Bad::Syntax(1, "invalid UTF-8"))
        ));
    }
}
