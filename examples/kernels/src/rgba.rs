//! Raw RGBA images (8 bits per channel, rows top to bottom, no padding):
//! resized (bilinear) and converted to RGBA, RGB or grayscale. The input is
//! `width * height * 4` bytes; the output `resizeWidth * resizeHeight *
//! channels`. Without a resize the pixels are converted as they stream in,
//! straight into the output (no copy of the image); a resize needs two rows
//! at a time in any order, so it keeps the input and works at `finish`,
//! checking for cancellation every 64 output rows.
//!
//! Bilinear sampling suits scale factors down to about 1/2; a stronger
//! reduction skips pixels (as canvas's default does): halve first.

use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Param, Transform, Values};

pub struct Rgba;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Rgba,
    Rgb,
    Gray,
}

impl Format {
    fn channels(self) -> usize {
        match self {
            Format::Rgba => 4,
            Format::Rgb => 3,
            Format::Gray => 1,
        }
    }

    /// Writes one RGBA pixel in this format into `out` (`channels()` bytes).
    fn convert(self, p: &[u8], out: &mut [u8]) {
        match self {
            Format::Rgba => out.copy_from_slice(&p[..4]),
            Format::Rgb => out.copy_from_slice(&p[..3]),
            // Rec. 601 luma in fixed point (weights sum to 256).
            Format::Gray => {
                out[0] =
                    ((77 * u32::from(p[0]) + 150 * u32::from(p[1]) + 29 * u32::from(p[2]) + 128)
                        >> 8) as u8
            }
        }
    }
}

pub struct Settings {
    width: usize,
    height: usize,
    out_width: usize,
    out_height: usize,
    format: Format,
}

impl Kernel for Rgba {
    const NAME: &'static std::ffi::CStr = c"example/rgba";
    const PARAMS: &'static [Param] = &[
        Param::integer(c"width", 1, 65535).required(),
        Param::integer(c"height", 1, 65535).required(),
        Param::integer(c"resizeWidth", 1, 65535),
        Param::integer(c"resizeHeight", 1, 65535),
        Param::string(c"format"),
    ];
    type Params = Settings;
    type State = Converting;

    fn params(values: &Values<'_>) -> Result<Settings, Error> {
        let format = match values.string("format") {
            None | Some("rgba") => Format::Rgba,
            Some("rgb") => Format::Rgb,
            Some("gray") => Format::Gray,
            Some(other) => {
                return Err(Error::new(
                    "ERR_EXAMPLE_RGBA_FORMAT",
                    format!("format must be 'rgba', 'rgb' or 'gray', not '{other}'"),
                ))
            }
        };
        let width = values.integer("width").unwrap_or(1) as usize;
        let height = values.integer("height").unwrap_or(1) as usize;
        let out_width = values.integer("resizeWidth").map_or(width, |w| w as usize);
        let out_height = values.integer("resizeHeight").map_or(height, |h| h as usize);
        Ok(Settings { width, height, out_width, out_height, format })
    }

    fn start(s: &Settings, _: Option<u64>) -> Result<Converting, Error> {
        let resize = (s.out_width, s.out_height) != (s.width, s.height);
        let kept = if resize { Vec::with_capacity(s.width * s.height * 4) } else { Vec::new() };
        Ok(Converting {
            width: s.width,
            height: s.height,
            out_width: s.out_width,
            out_height: s.out_height,
            format: s.format,
            resize,
            kept,
            partial: Vec::with_capacity(4),
            seen: 0,
        })
    }
}

pub struct Converting {
    width: usize,
    height: usize,
    out_width: usize,
    out_height: usize,
    format: Format,
    resize: bool,
    /// The whole input, when resizing.
    kept: Vec<u8>,
    /// The first bytes of a pixel split between two chunks.
    partial: Vec<u8>,
    /// Input bytes so far.
    seen: usize,
}

impl Converting {
    fn expected(&self) -> usize {
        self.width * self.height * 4
    }

    /// Converts whole pixels of `bytes` straight into the output.
    fn convert(&self, bytes: &[u8], out: &mut Output<'_>) -> Result<(), Error> {
        let channels = self.format.channels();
        let mut pixels = bytes.chunks_exact(4);
        while pixels.len() > 0 {
            let room = out.unfilled(pixels.len() * channels)?;
            let fit = (room.len() / channels).min(pixels.len());
            if fit == 0 {
                // Less room than one pixel: the limit is nearer than that.
                return Err(Error::TOO_LARGE);
            }
            for (p, o) in (&mut pixels).take(fit).zip(room.chunks_exact_mut(channels)) {
                self.format.convert(p, o);
            }
            out.commit(fit * channels)?;
        }
        Ok(())
    }

    fn resized(&self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        let (w, h, ow, oh) = (self.width, self.height, self.out_width, self.out_height);
        let channels = self.format.channels();
        out.reserve(ow * oh * channels);
        // Where each output column samples: the two input columns and the weight of the second.
        let columns: Vec<(usize, usize, f32)> = (0..ow).map(|x| sample(x, w, ow)).collect();
        let mut row = vec![0u8; ow * channels];
        for y in 0..oh {
            if y % 64 == 0 {
                cx.check()?;
            }
            let (y0, y1, fy) = sample(y, h, oh);
            let (top, bottom) =
                (&self.kept[y0 * w * 4..][..w * 4], &self.kept[y1 * w * 4..][..w * 4]);
            for (&(x0, x1, fx), o) in columns.iter().zip(row.chunks_exact_mut(channels)) {
                let mut pixel = [0u8; 4];
                for (c, v) in pixel.iter_mut().enumerate() {
                    let at = |line: &[u8], x: usize| f32::from(line[x * 4 + c]);
                    let upper = at(top, x0) + (at(top, x1) - at(top, x0)) * fx;
                    let lower = at(bottom, x0) + (at(bottom, x1) - at(bottom, x0)) * fx;
                    *v = (upper + (lower - upper) * fy).round().clamp(0.0, 255.0) as u8;
                }
                self.format.convert(&pixel, o);
            }
            out.write(&row)?;
        }
        Ok(())
    }
}

/// The input positions output position `i` (of `outer`) samples among
/// `inner`: two neighbours and the second one's weight (pixel centres aligned).
fn sample(i: usize, inner: usize, outer: usize) -> (usize, usize, f32) {
    let at = ((i as f32 + 0.5) * inner as f32 / outer as f32 - 0.5).clamp(0.0, (inner - 1) as f32);
    let first = at.floor() as usize;
    (first, (first + 1).min(inner - 1), at - first as f32)
}

impl Transform for Converting {
    fn update(
        &mut self,
        mut chunk: &[u8],
        out: &mut Output<'_>,
        _: &Context<'_>,
    ) -> Result<(), Error> {
        self.seen += chunk.len();
        if self.seen > self.expected() {
            return Err(size_error(self.expected(), self.seen, "at least"));
        }
        if self.resize {
            self.kept.extend_from_slice(chunk);
            return Ok(());
        }
        if !self.partial.is_empty() {
            let take = (4 - self.partial.len()).min(chunk.len());
            self.partial.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.partial.len() == 4 {
                let pixel = std::mem::take(&mut self.partial);
                self.convert(&pixel, out)?;
            }
        }
        let whole = chunk.len() / 4 * 4;
        self.convert(&chunk[..whole], out)?;
        self.partial.extend_from_slice(&chunk[whole..]);
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        if self.seen != self.expected() {
            return Err(size_error(self.expected(), self.seen, ""));
        }
        if self.resize {
            self.resized(out, cx)?;
        }
        Ok(())
    }
}

fn size_error(expected: usize, seen: usize, qualifier: &str) -> Error {
    let qualifier = if qualifier.is_empty() { String::new() } else { format!("{qualifier} ") };
    Error::new(
        "ERR_EXAMPLE_RGBA_SIZE",
        format!(
            "the image must be width * height * 4 = {expected} bytes; received {qualifier}{seen}"
        ),
    )
}
