//! The `--json` document written while the workers describe the code objects:
//! each object's JSON goes out as soon as every object before it has, and
//! the buffer it was written into is reused for a later one.
//!
//! Holding the whole document until the end cost a fresh page for each 4 KiB
//! of it (a page fault each: a report over the ROCm wheels is 3.5 MB); the
//! buffers here are few (one per worker, and one per object that finished
//! before an earlier one), so their pages are faulted in once and reused.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;

use super::json::Writer;
use super::{CodeObject, FileError};

/// The document being written to `W`, in order, by any number of workers.
pub(super) struct Stream<W> {
    state: Mutex<State<W>>,
}

struct State<W> {
    out: W,
    /// The index of the next code object to write.
    next: usize,
    /// Objects serialized before one that comes earlier in the document.
    waiting: BTreeMap<usize, Vec<u8>>,
    /// Written buffers, kept for the next objects.
    spare: Vec<Vec<u8>>,
    /// The first write that failed; nothing is written after it.
    error: Option<std::io::Error>,
}

impl<W: Write> Stream<W> {
    /// A document on `out`: its opening is written now.
    pub(super) fn new(out: W) -> Self {
        let mut state = State {
            out,
            next: 0,
            waiting: BTreeMap::new(),
            spare: Vec::new(),
            error: None,
        };
        state.write(b"{\n  \"code_objects\": [");
        Self {
            state: Mutex::new(state),
        }
    }

    /// Object `index` (each index from 0 once): serialized here, written now
    /// if every earlier object has been, else when they have.
    pub(super) fn put(&self, index: usize, object: &CodeObject) {
        let mut buf = {
            let mut state = self.lock();
            if state.error.is_some() {
                // Nothing more is written (a closed pipe): not worth serializing.
                return;
            }
            state.spare.pop().unwrap_or_default()
        };
        Writer::at(&mut buf, 2).code_object(object);
        let mut guard = self.lock();
        let state = &mut *guard;
        state.waiting.insert(index, buf);
        while let Some(mut buf) = state.waiting.remove(&state.next) {
            let separator: &[u8] = if state.next == 0 {
                b"\n    "
            } else {
                b",\n    "
            };
            state.write(separator);
            state.write(&buf);
            state.next += 1;
            buf.clear();
            state.spare.push(buf);
        }
    }

    /// Ends the document after the `count` objects put, with the report's
    /// errors, and returns what it was written to; the first failed write, or
    /// an object that was never put, is the error.
    pub(super) fn finish(self, count: usize, errors: &[FileError]) -> std::io::Result<W> {
        let mut state = self
            .state
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(e) = state.error.take() {
            return Err(e);
        }
        if state.next != count || !state.waiting.is_empty() {
            return Err(std::io::Error::other(format!(
                "{} of {count} code objects written",
                state.next
            )));
        }
        if count > 0 {
            state.write(b"\n  ");
        }
        state.write(b"],\n  \"errors\": ");
        let mut tail = Vec::new();
        Writer::at(&mut tail, 1).errors(errors);
        tail.extend_from_slice(b"\n}\n");
        state.write(&tail);
        if state.error.is_none() {
            if let Err(e) = state.out.flush() {
                state.error = Some(e);
            }
        }
        match state.error {
            Some(e) => Err(e),
            None => Ok(state.out),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<W>> {
        // A worker that panicked while holding the lock has already failed
        // the run (its join panics); the state is still whole.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<W: Write> State<W> {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.error = Some(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::tests::object;
    use super::super::{FileError, Report};
    use super::Stream;

    fn whole_document(report: &Report) -> Vec<u8> {
        let mut pretty = serde_json::to_vec_pretty(report).unwrap();
        pretty.push(b'\n');
        pretty
    }

    /// Objects put in any order come out in index order, as serde_json writes
    /// the whole report; with no object, and with errors or none.
    #[test]
    fn writes_in_index_order_whatever_the_order_of_puts() {
        let orders: [&[usize]; 4] = [&[], &[0], &[3, 0, 4, 1, 2], &[4, 3, 2, 1, 0]];
        for order in orders {
            for errors in 0..2 {
                let report = Report {
                    code_objects: (0..order.len()).map(object).collect(),
                    errors: (0..errors)
                        .map(|i| FileError {
                            file: format!("f{i}"),
                            error: "e".into(),
                        })
                        .collect(),
                };
                let stream = Stream::new(Vec::new());
                for &i in order {
                    stream.put(i, &report.code_objects[i]);
                }
                let written = stream.finish(order.len(), &report.errors).unwrap();
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    String::from_utf8(whole_document(&report)).unwrap(),
                    "order {order:?}, {errors} errors"
                );
            }
        }
    }

    /// An object never put, and a write that fails, are errors of `finish`.
    #[test]
    fn a_missing_object_or_a_failed_write_is_an_error() {
        let stream = Stream::new(Vec::new());
        stream.put(1, &object(1));
        assert!(stream.finish(2, &[]).is_err());

        /// Accepts `left` bytes, then fails.
        struct Short {
            left: usize,
        }
        impl std::io::Write for Short {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.left == 0 {
                    return Err(std::io::ErrorKind::BrokenPipe.into());
                }
                let n = buf.len().min(self.left);
                self.left -= n;
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        for left in [0, 5, 100, 1000] {
            let stream = Stream::new(Short { left });
            stream.put(0, &object(0));
            stream.put(1, &object(1));
            let e = stream.finish(2, &[]).err().expect("the write fails");
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe,
                "after {left} bytes"
            );
        }
        // A failed write is the error even when objects were left out after it.
        let stream = Stream::new(Short { left: 0 });
        stream.put(1, &object(1));
        let e = stream.finish(2, &[]).err().expect("the write fails");
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
    }
}
