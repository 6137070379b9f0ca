//! A deflate stream in blocks (block_stream.rs): pending output and its order.

use super::*;
use crate::kernels::codec::testing::text;
use std::sync::atomic::AtomicBool;

/// A gzip stream that took `data` as blocks on this thread: their
/// output is pending.
fn taken(data: &[u8], ctx: &RunContext<'_>) -> BlockStream {
    let settings = Settings { level: 6, mem_level: 8, strategy: 0 };
    let mut stream = BlockStream::new(Format::Gzip, settings).unwrap();
    stream.take(&[data], usize::MAX, ctx, None).unwrap();
    stream
}

/// What blocks made goes to the reader in the vectors they made it in:
/// a step's output is one block's, not a copy of several.
#[test]
fn a_blocks_output_is_a_steps_output_as_it_was_made() {
    let data = text(4 * STREAM_BLOCK + 100);
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let mut stream = taken(&data, &ctx);
    let made: Vec<*const u8> =
        stream.pending.iter().filter(|p| p.is_spilled()).map(|p| p.as_bytes().as_ptr()).collect();
    assert!(made.len() >= 4, "{} blocks' outputs spilled", made.len());
    let mut steps = Vec::new();
    loop {
        let mut out = Sink::new(usize::MAX);
        out.stop_between_pieces();
        let done = stream.drain(&mut out).unwrap();
        steps.push(out.into_output());
        if done {
            break;
        }
    }
    // The header alone, then each block's output in a step of its own
    // (what the open block made so far goes after the last).
    assert_eq!(steps.len(), 1 + made.len());
    for at in made {
        assert!(steps.iter().any(|s| s.as_bytes().as_ptr() == at), "a block's output was copied");
    }
    let mut all = Vec::new();
    for s in &steps {
        all.extend_from_slice(s.as_bytes());
    }
    let mut out = Sink::new(usize::MAX);
    assert!(stream.finish(&mut out, &ctx).unwrap());
    all.extend_from_slice(out.into_output().as_bytes());
    assert_eq!(crate::kernels::codec::testing::run("gunzip", &all).unwrap(), data);
}

/// A step that has work of its own after the blocks' output (a flush,
/// the end) writes all of it, then does its work.
#[test]
fn a_step_with_work_after_the_blocks_output_takes_it_all() {
    let data = text(4 * STREAM_BLOCK + 100);
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let mut stream = taken(&data, &ctx);
    let mut out = Sink::new(usize::MAX);
    assert!(stream.finish(&mut out, &ctx).unwrap());
    let all = out.into_output();
    assert!(stream.pending.is_empty());
    assert_eq!(crate::kernels::codec::testing::run("gunzip", all.as_bytes()).unwrap(), data);
}
