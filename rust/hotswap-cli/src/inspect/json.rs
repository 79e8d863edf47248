//! The `--json` document written directly, byte for byte as
//! `serde_json::to_writer_pretty` writes the report's `Serialize` form (the
//! tests hold the two together on every field, every `null`, and strings that
//! need escaping).
//!
//! Why not serde_json itself: a report is mostly kernel names (some 17,000
//! mangled C++ names in the ROCm wheels), and serde_json looks at each byte of
//! each string on its own; here a string is checked for bytes that need an
//! escape in one pass the compiler vectorizes, and copied whole when it has
//! none (serde_json escapes the others). Serializing was an eighth of
//! inspect's instructions; it is a few percent now.

use super::{A0Class, ClassCounts, CodeObject, FileError, Function, Moved, Site, Unknown};

/// A JSON writer at a nesting level, with serde_json's pretty layout
/// (two-space indent, `"key": value`, empty arrays and objects as `[]`, `{}`).
pub(super) struct Writer<'a> {
    out: &'a mut Vec<u8>,
    level: usize,
    /// Whether the innermost open array or object has a value yet.
    has_value: bool,
}

impl<'a> Writer<'a> {
    /// A writer whose first value is at nesting `level` of a document (its
    /// first line not indented).
    pub(super) fn at(out: &'a mut Vec<u8>, level: usize) -> Self {
        Self {
            out,
            level,
            has_value: false,
        }
    }

    /// A new line, after a comma unless `first`, indented to the level.
    fn line(&mut self, first: bool) {
        /// A comma, a newline and the indent of 32 levels (a report has 7);
        /// deeper levels add to it.
        const LINE: [u8; 66] = {
            let mut line = [b' '; 66];
            line[0] = b',';
            line[1] = b'\n';
            line
        };
        let end = 2 + 2 * self.level;
        self.out
            .extend_from_slice(&LINE[usize::from(first)..end.min(LINE.len())]);
        for _ in LINE.len()..end {
            self.out.push(b' ');
        }
    }

    fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.level += 1;
        self.has_value = false;
    }

    fn close(&mut self, bracket: u8, had_value: bool) {
        self.level -= 1;
        if had_value {
            self.line(true);
        }
        self.out.push(bracket);
        self.has_value = true;
    }

    /// An object: `fields` writes its entries with [`Writer::key`].
    fn object(&mut self, fields: impl FnOnce(&mut Self)) {
        self.open(b'{');
        fields(self);
        let had_value = self.has_value;
        self.close(b'}', had_value);
    }

    /// An array of `items`, each written by `item`.
    fn array<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Self, &T)) {
        self.open(b'[');
        for (i, value) in items.iter().enumerate() {
            self.line(i == 0);
            item(self, value);
        }
        self.close(b']', !items.is_empty());
    }

    /// The key of the next entry of the open object (its value follows).
    fn key(&mut self, key: &str) {
        let first = !self.has_value;
        self.line(first);
        self.string(key);
        self.out.extend_from_slice(b": ");
        // The value about to be written counts as the object's.
        self.has_value = true;
    }

    fn string(&mut self, s: &str) {
        // One pass over the bytes without a branch per byte.
        let plain = s.bytes().fold(true, |plain, b| {
            plain & (b >= 0x20) & (b != b'"') & (b != b'\\')
        });
        if plain {
            self.out.push(b'"');
            self.out.extend_from_slice(s.as_bytes());
            self.out.push(b'"');
        } else {
            // serde_json's escapes (a write to a Vec cannot fail).
            let _ = serde_json::to_writer(&mut *self.out, s);
        }
    }

    fn uint(&mut self, value: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut v = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.out.extend_from_slice(&digits[at..]);
    }

    fn bool(&mut self, value: bool) {
        self.out
            .extend_from_slice(if value { b"true" } else { b"false" });
    }

    fn null(&mut self) {
        self.out.extend_from_slice(b"null");
    }

    fn opt_string(&mut self, value: Option<&str>) {
        match value {
            Some(s) => self.string(s),
            None => self.null(),
        }
    }

    fn opt_uint(&mut self, value: Option<u64>) {
        match value {
            Some(v) => self.uint(v),
            None => self.null(),
        }
    }

    /// `"key": "value"`, and the same for the other value kinds.
    fn str_entry(&mut self, key: &str, value: &str) {
        self.key(key);
        self.string(value);
    }

    fn uint_entry(&mut self, key: &str, value: u64) {
        self.key(key);
        self.uint(value);
    }

    /// A code object, as its `Serialize` form (fields in declaration order,
    /// the `skip_serializing_if` ones only when present).
    pub(super) fn code_object(&mut self, o: &CodeObject) {
        self.object(|w| {
            w.str_entry("file", &o.file);
            w.key("bundle_id");
            w.opt_string(o.bundle_id.as_deref());
            w.str_entry("container", o.container);
            w.key("in_host_elf");
            w.bool(o.in_host_elf);
            w.key("isa");
            w.opt_string(o.isa.as_deref());
            w.key("code_object_version");
            w.opt_uint(o.code_object_version.map(u64::from));
            w.uint_entry("size", o.size);
            w.key("kernels");
            w.array(&o.kernels, |w, k| w.string(k));
            if let Some(functions) = &o.functions {
                w.key("functions");
                w.array(functions, Self::function);
            }
            if let Some(complete) = o.complete {
                w.key("complete");
                w.bool(complete);
            }
            if let Some(unknown) = &o.unknown {
                w.key("unknown");
                w.array(unknown, Self::unknown);
            }
            if let Some(note) = &o.note {
                w.str_entry("note", note);
            }
            if let Some(extracted) = &o.extracted {
                w.str_entry("extracted", extracted);
            }
            if let Some(moved) = &o.moved_functions {
                w.key("moved_functions");
                w.array(moved, Self::moved);
            }
            if let Some(pending) = o.pending_sites {
                w.uint_entry("pending_sites", pending as u64);
            }
        });
    }

    fn function(&mut self, f: &Function) {
        self.object(|w| {
            w.str_entry("name", &f.name);
            w.str_entry("kind", f.kind);
            w.uint_entry("offset", f.offset);
            w.uint_entry("size", f.size);
            w.uint_entry("instructions", f.instructions);
            w.key("a0");
            w.class_counts(&f.a0);
            w.key("sites");
            w.array(&f.sites, Self::site);
            if let Some(to) = f.moved_to {
                w.uint_entry("moved_to", to);
            }
            if let Some(kind) = f.gateway {
                w.str_entry("gateway", kind);
            }
        });
    }

    fn class_counts(&mut self, counts: &ClassCounts) {
        self.object(|w| {
            for (class, &count) in A0Class::ALL.iter().zip(&counts.0) {
                w.uint_entry(class.as_str(), count as u64);
            }
        });
    }

    fn site(&mut self, s: &Site) {
        self.object(|w| {
            w.uint_entry("offset", s.offset);
            w.uint_entry("length", u64::from(s.length));
            w.str_entry("class", s.class);
            w.str_entry("mnemonic", s.mnemonic);
            w.str_entry("fix", s.fix);
            w.key("needs_change");
            w.bool(s.needs_change);
        });
    }

    fn unknown(&mut self, u: &Unknown) {
        self.object(|w| {
            w.str_entry("function", &u.function);
            w.uint_entry("offset", u.offset);
            w.key("first_dword");
            w.opt_uint(u.first_dword.map(u64::from));
        });
    }

    fn moved(&mut self, m: &Moved) {
        self.object(|w| {
            w.str_entry("name", &m.name);
            w.uint_entry("original_vaddr", m.original_vaddr);
            w.uint_entry("original_size", m.original_size);
            w.uint_entry("new_vaddr", m.new_vaddr);
            w.uint_entry("new_size", m.new_size);
        });
    }

    /// The report's errors.
    pub(super) fn errors(&mut self, errors: &[FileError]) {
        self.array(errors, |w, e| {
            w.object(|w| {
                w.str_entry("file", &e.file);
                w.str_entry("error", &e.error);
            });
        });
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::{ClassCounts, CodeObject, FileError, Function, Moved, Site, Unknown};
    use super::Writer;
    use hotswap_code_object::gfx1250::A0Class;

    /// Strings that need every kind of escape, and plain ones.
    const AWKWARD: [&str; 8] = [
        "plain",
        "",
        "quote \" and backslash \\",
        "only a backslash \\ here",
        "only a \" quote",
        "control \u{1} \n \t \u{1f} end",
        "non-ASCII é ✓ and DEL \u{7f}",
        "_ZN3c10L10kernel_fooIfLi256EEEvPKT_",
    ];

    /// A code object with a different mix of fields present for each `i`.
    pub(in crate::inspect) fn object(i: usize) -> CodeObject {
        let text = |j: usize| AWKWARD[(i + j) % AWKWARD.len()].to_owned();
        let some = i % 2 == 0;
        let mut counts = [0usize; A0Class::ALL.len()];
        counts[i % counts.len()] = i * 1000 + 7;
        CodeObject {
            file: text(0),
            bundle_id: some.then(|| text(1)),
            container: "bundle",
            in_host_elf: some,
            isa: (!some).then(|| text(2)),
            code_object_version: some.then_some(5),
            size: u64::MAX - i as u64,
            kernels: (0..i % 4).map(text).collect(),
            functions: some.then(|| {
                (0..i % 3)
                    .map(|j| Function {
                        name: text(j),
                        kind: "kernel-entry",
                        offset: j as u64,
                        size: 0,
                        instructions: 10_u64.pow(j as u32),
                        a0: ClassCounts(counts),
                        sites: (0..j)
                            .map(|k| Site {
                                offset: k as u64,
                                length: 12,
                                class: "s_clause",
                                mnemonic: "s_clause",
                                fix: "same-size",
                                needs_change: k % 2 == 0,
                            })
                            .collect(),
                        moved_to: (j == 1).then_some(0x1000),
                        gateway: (j == 1 && i % 2 == 0).then_some("far-jump"),
                    })
                    .collect()
            }),
            complete: some.then_some(i % 4 == 0),
            unknown: some.then(|| {
                (0..i % 3)
                    .map(|j| Unknown {
                        function: text(j),
                        offset: 9,
                        first_dword: (j == 0).then_some(u32::MAX),
                    })
                    .collect()
            }),
            note: (!some).then(|| text(3)),
            extracted: (i % 3 == 0).then(|| text(4)),
            moved_functions: (i % 3 == 1).then(|| {
                (0..i % 2 + 1)
                    .map(|j| Moved {
                        name: text(j),
                        original_vaddr: 1,
                        original_size: 2,
                        new_vaddr: 3,
                        new_size: 0,
                    })
                    .collect()
            }),
            pending_sites: (i % 3 == 1).then_some(i),
        }
    }

    /// serde_json's pretty form of `value` as it reads at nesting `level` of a
    /// document: every line after the first indented by `level` more steps
    /// (a JSON string holds no raw newline).
    fn at_level<T: serde::Serialize + ?Sized>(value: &T, level: usize) -> String {
        serde_json::to_string_pretty(value)
            .unwrap()
            .replace('\n', &format!("\n{}", "  ".repeat(level)))
    }

    /// Every field present and absent, every `null`, empty and non-empty
    /// arrays, escapes: what serde_json writes for the `Serialize` form, at
    /// the nesting level the document places each part.
    #[test]
    fn writes_what_serde_json_writes() {
        for i in 0..24 {
            let o = object(i);
            for level in [0, 2, 20, 40] {
                let mut ours = Vec::new();
                Writer::at(&mut ours, level).code_object(&o);
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    at_level(&o, level),
                    "object {i} at level {level}"
                );
            }
        }
        for n in 0..3 {
            let errors: Vec<FileError> = (0..n)
                .map(|j| FileError {
                    file: AWKWARD[j + 2].into(),
                    error: AWKWARD[j + 3].into(),
                })
                .collect();
            let mut ours = Vec::new();
            Writer::at(&mut ours, 1).errors(&errors);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                at_level(&errors, 1),
                "{n} errors"
            );
        }
    }
}
