// One-thread speed of the codec candidates on 64 x 64 KiB of JSON-like
// records (best of 5): the measurement behind "Choosing the codecs" in
// docs/benchmarks-history.md. MB/s is of the input handed to each call.
use std::io::Read;
#[allow(unused_imports)]
use std::io::Write;
use std::time::Instant;

fn json(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < n {
        out.extend_from_slice(format!("{{\"id\":{i},\"name\":\"user-{}\",\"tags\":[\"a\",\"b\",\"{}\"],\"score\":{}}}\n", i % 97, i % 13, (i * 7919) % 1000).as_bytes());
        i += 1;
    }
    out.truncate(n);
    out
}

fn bench(name: &str, data: &[Vec<u8>], f: &dyn Fn(&[u8]) -> Vec<u8>) -> Vec<Vec<u8>> {
    let total: usize = data.iter().map(|d| d.len()).sum();
    let mut best = f64::MAX;
    let mut outs = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        outs = data.iter().map(|d| f(d)).collect();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let out_total: usize = outs.iter().map(|d| d.len()).sum();
    println!("{name:28} {:8.1} MB/s (input side)  ratio {:.3}", total as f64 / best / 1e6, out_total as f64 / total as f64);
    outs
}

fn main() {
    let data: Vec<Vec<u8>> = (0..64).map(|k| { let mut d = json(64 * 1024 + k); d.rotate_left(k * 100); d }).collect();
    #[cfg(feature = "zstd")]
    {
        let c = bench("zstd 3 compress", &data, &|d| zstd::bulk::compress(d, 3).unwrap());
        let n: usize = data.iter().map(|d| d.len()).sum();
        let _ = n;
        bench("zstd decompress", &c, &|d| { let mut o = Vec::new(); zstd::stream::read::Decoder::new(d).unwrap().read_to_end(&mut o).unwrap(); o });
    }
    #[cfg(feature = "brotli")]
    for q in [4u32, 5, 11] {
        let c = bench(&format!("brotli(rust) q{q} compress"), &data, &|d| { let mut o = Vec::new(); { let mut w = brotli::CompressorWriter::new(&mut o, 4096, q, 22); w.write_all(d).unwrap(); } o });
        bench(&format!("brotli(rust) q{q} decompress"), &c, &|d| { let mut o = Vec::new(); brotli::Decompressor::new(d, 4096).read_to_end(&mut o).unwrap(); o });
    }
    #[cfg(feature = "brotlic")]
    for q in [4u8, 5, 11] {
        let c = bench(&format!("brotli(C) q{q} compress"), &data, &|d| {
            let enc = brotlic::BrotliEncoderOptions::new().quality(brotlic::Quality::new(q).unwrap()).build().unwrap();
            let mut w = brotlic::CompressorWriter::with_encoder(enc, Vec::new());
            w.write_all(d).unwrap();
            w.into_inner().unwrap()
        });
        bench(&format!("brotli(C) q{q} decompress"), &c, &|d| { let mut o = Vec::new(); brotlic::DecompressorReader::new(d).read_to_end(&mut o).unwrap(); o });
    }
    // One-shot gunzip of 64 KiB JSON gzipped at level 6, into a buffer of
    // the size the trailer gives, as a one-shot task knows it:
    //   cargo run --release --manifest-path bench/probes/codecs/Cargo.toml --features gunzip
    #[cfg(feature = "gunzip")]
    {
        let gz: Vec<Vec<u8>> = data.iter().map(|d| {
            let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(6).unwrap());
            let mut o = vec![0; c.gzip_compress_bound(d.len())];
            let n = c.gzip_compress(d, &mut o).unwrap();
            o.truncate(n);
            o
        }).collect();
        let isize = |g: &[u8]| u32::from_le_bytes(g[g.len() - 4..].try_into().unwrap()) as usize;
        for _ in 0..3 {
            let a = bench("gunzip zlib-rs", &gz, &|g| zlib_rs_gunzip(g, isize(g)));
            let b = bench("gunzip libdeflate", &gz, &|g| {
                let mut d = libdeflater::Decompressor::new();
                let mut o = vec![0; isize(g)];
                let n = d.gzip_decompress(g, &mut o).unwrap();
                o.truncate(n);
                o
            });
            assert_eq!(a, b);
            assert_eq!(a, data);
        }
    }
    // gzip of whole bodies: each zlib-rs level (what the pool's streams
    // make) against each libdeflate level, output size and speed, on the
    // JSON records and on text (the Markdown files under the directory
    // given as the first argument, cut in 64 KiB bodies):
    //   cargo run --release --manifest-path bench/probes/codecs/Cargo.toml --features gzip-levels -- docs
    #[cfg(feature = "gzip-levels")]
    {
        let mut text = Vec::new();
        if let Some(dir) = std::env::args().nth(1) {
            let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            names.sort();
            for name in names.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
                text.extend(std::fs::read(name).unwrap());
            }
        }
        let bodies: Vec<Vec<u8>> = text.chunks(64 * 1024).filter(|c| c.len() == 64 * 1024).map(|c| c.to_vec()).collect();
        for (corpus, set) in [("json", &data), ("text", &bodies)] {
            if set.is_empty() {
                continue;
            }
            for level in 1..=9 {
                bench(&format!("{corpus} zlib-rs {level}"), set, &|d| zlib_rs_gzip(d, level));
            }
            for level in 1..=12 {
                bench(&format!("{corpus} libdeflate {level}"), set, &|d| {
                    let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
                    let mut o = vec![0; c.gzip_compress_bound(d.len())];
                    let n = c.gzip_compress(d, &mut o).unwrap();
                    o.truncate(n);
                    o
                });
            }
        }
    }
    #[cfg(feature = "lz4_flex")]
    {
        let c = bench("lz4 frame compress", &data, &|d| { let mut w = lz4_flex::frame::FrameEncoder::new(Vec::new()); w.write_all(d).unwrap(); w.finish().unwrap() });
        bench("lz4 frame decompress", &c, &|d| { let mut o = Vec::new(); lz4_flex::frame::FrameDecoder::new(d).read_to_end(&mut o).unwrap(); o });
    }
}

/// zlib-rs's gzip of `input` at `level`, through its zlib API as the
/// pool's gzip kernel uses it (window 15, memLevel 8), in one call.
#[cfg(feature = "gzip-levels")]
fn zlib_rs_gzip(input: &[u8], level: i32) -> Vec<u8> {
    use libz_rs_sys::*;
    let mut out = vec![0u8; input.len() + input.len() / 100 + 64];
    // SAFETY: a zeroed z_stream is what deflateInit2_ expects; the buffers
    // outlive the calls, and deflateEnd frees what deflateInit2_ made.
    unsafe {
        let mut strm: z_stream = std::mem::zeroed();
        let rc = deflateInit2_(&mut strm, level, Z_DEFLATED, 31, 8, 0, zlibVersion(), std::mem::size_of::<z_stream>() as i32);
        assert_eq!(rc, Z_OK);
        strm.next_in = input.as_ptr() as *mut u8;
        strm.avail_in = input.len() as u32;
        strm.next_out = out.as_mut_ptr();
        strm.avail_out = out.len() as u32;
        assert_eq!(deflate(&mut strm, Z_FINISH), Z_STREAM_END);
        out.truncate(strm.total_out as usize);
        deflateEnd(&mut strm);
    }
    out
}

/// zlib-rs through its zlib API, as the pool's gunzip kernel uses it: one
/// inflate call with the whole input and an output of the trailer's size.
#[cfg(feature = "gunzip")]
fn zlib_rs_gunzip(input: &[u8], size: usize) -> Vec<u8> {
    use libz_rs_sys::*;
    let mut out = vec![0u8; size];
    // SAFETY: a zeroed z_stream is what inflateInit2_ expects; the buffers
    // outlive the calls, and inflateEnd frees what inflateInit2_ made.
    unsafe {
        let mut strm: z_stream = std::mem::zeroed();
        let rc = inflateInit2_(&mut strm, 31, zlibVersion(), std::mem::size_of::<z_stream>() as i32);
        assert_eq!(rc, Z_OK);
        strm.next_in = input.as_ptr() as *mut u8;
        strm.avail_in = input.len() as u32;
        strm.next_out = out.as_mut_ptr();
        strm.avail_out = out.len() as u32;
        let rc = inflate(&mut strm, Z_FINISH);
        assert_eq!(rc, Z_STREAM_END);
        out.truncate(strm.total_out as usize);
        inflateEnd(&mut strm);
    }
    out
}
