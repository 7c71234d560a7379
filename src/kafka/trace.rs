//! The field trace of one frame: every field a decoder reads, with its name, wire type, value,
//! byte offset and size, as a tree of [`Node`]s, recorded while decoding when asked
//! ([`super::primitives::Budget::traced`]).
//!
//! Input: the traced primitives of [`super::primitives`] (`leaf`, `string_field`, `array`,
//! `tags`, `group`), which the header and body decoders call for every field. Output: the
//! frame's [`Node`] tree ([`Trace::finish`]), which `--format tree` renders
//! ([`super::tree`]). So each layout is described once, in its decoder: the tree cannot drift
//! from what is decoded.
//!
//! Offsets are from the start of the frame, its 4-byte size prefix included: every slice a
//! decoder reads is a suffix of the frame, so a field's offset is the frame's length less the
//! bytes left when the field begins. Names: body fields appear as Kafka's schema spells them
//! (`producer_id` is traced as `ProducerId`), header fields, `length` and `tagged_fields` as
//! they are.

/// The typed value of a leaf, beside its text: what a partial body
/// ([`super::partial::PartialBody`]) is built from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scalar {
    /// No value of its own: a group, an array's length, tagged fields.
    #[default]
    None,
    /// An integer field (INT8 to INT64, UINT16, varints).
    Int(i64),
    /// A BOOLEAN.
    Bool(bool),
    /// A STRING or UUID.
    Str(String),
    /// A null STRING or array.
    Null,
    /// An `ErrorCode` (INT16): its number, with Kafka's name beside it in a body.
    Error(i16),
    /// A value Kafka's schema stores as a number or flag but the body names
    /// (`transaction_result`: `"COMMIT"` or `"ABORT"`).
    Named(&'static str),
}

/// One field (or group of fields) of a frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Node {
    /// The field's name as Kafka's schema spells it (`ProducerId`), an element name
    /// (`WritableTxnMarker[0]`), or a group (`Frame`, `RequestHeader v2`).
    pub name: String,
    /// The wire type (`int64`, `[]WritableTxnMarker`, `uvarint`), empty for a group.
    pub kind: String,
    /// The value as text (`4000`, `"orders"`, `2 (compact, n+1)`), empty for a group.
    pub value: String,
    /// Byte offset from the start of the frame (the size prefix is at 0).
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// The fields inside it, in wire order.
    pub children: Vec<Node>,
    /// A leaf's typed value ([`Scalar::None`] for a group).
    pub scalar: Scalar,
}

impl Node {
    /// The first place where this tree does not tile its bytes, if any: each node's children
    /// must lie inside it, in order, without gaps or overlaps, and cover it exactly.
    pub fn untiled(&self) -> Option<String> {
        if self.children.is_empty() {
            return None;
        }
        let mut at = self.offset;
        for c in &self.children {
            if c.offset != at {
                return Some(format!(
                    "{} at 0x{:x} inside {}, expected at 0x{at:x}",
                    c.name, c.offset, self.name
                ));
            }
            if let Some(e) = c.untiled() {
                return Some(e);
            }
            at = c.offset + c.size;
        }
        (at != self.offset + self.size).then(|| {
            format!(
                "the children of {} end at 0x{at:x}, it at 0x{:x}",
                self.name,
                self.offset + self.size
            )
        })
    }

    /// Every node, depth first in wire order, as `(name, offset, size)`.
    pub fn flatten(&self) -> Vec<(String, usize, usize)> {
        let mut out = vec![(self.name.clone(), self.offset, self.size)];
        for c in &self.children {
            out.extend(c.flatten());
        }
        out
    }
}

/// Most nodes one trace records (a forged frame of millions of empty topics would otherwise
/// build millions of nodes). Past it, fields are decoded but not traced: each group that holds
/// some of them ends with one `not_traced` node covering their bytes and saying how many they
/// were, so the tree still covers its frame.
pub const MAX_TRACE_NODES: usize = 200_000;

/// A group being recorded.
#[derive(Debug)]
struct Open {
    node: Node,
    /// False for a group opened past [`MAX_TRACE_NODES`]: it is counted, not kept.
    kept: bool,
    /// Fields inside it (at any depth) that were not traced.
    omitted: usize,
}

/// The trace being recorded: the open groups, innermost last.
#[derive(Debug)]
pub struct Trace {
    /// Length of the whole frame, size prefix included.
    whole_len: usize,
    /// Open groups; the first is the root.
    stack: Vec<Open>,
    /// Body fields are named as the schema spells them (see the module documentation).
    pub camel: bool,
    /// Nodes recorded so far.
    nodes: usize,
}

fn node(name: String, kind: &str, value: String, offset: usize, size: usize) -> Node {
    Node {
        name,
        kind: kind.to_string(),
        value,
        offset,
        size,
        children: Vec::new(),
        scalar: Scalar::None,
    }
}

impl Trace {
    /// A trace of a frame of `whole_len` bytes (size prefix included), under a root node
    /// named `root`.
    pub fn new(whole_len: usize, root: String) -> Self {
        Trace {
            whole_len,
            stack: vec![Open {
                node: node(root, "", String::new(), 0, whole_len),
                kept: true,
                omitted: 0,
            }],
            camel: false,
            nodes: 1,
        }
    }

    /// The frame offset of the field that starts where `rest` starts.
    pub fn offset_of(&self, rest: &[u8]) -> usize {
        self.whole_len.saturating_sub(rest.len())
    }

    fn name(&self, name: &str) -> String {
        let snake = name
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
        if !self.camel || !snake || name == "length" || name == "tagged_fields" {
            return name.to_string();
        }
        name.split('_')
            .map(|w| {
                let mut c = w.chars();
                match c.next() {
                    Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                    None => String::new(),
                }
            })
            .collect()
    }

    /// Whether a new node may be kept: below the cap, and not inside a group that was not.
    fn room(&self) -> bool {
        self.nodes < MAX_TRACE_NODES && self.stack.last().is_some_and(|o| o.kept)
    }

    /// Counts a field that is not traced against the innermost group that is kept.
    fn omit(&mut self) {
        if let Some(o) = self.stack.iter_mut().rev().find(|o| o.kept) {
            o.omitted += 1;
        }
    }

    /// Opens a group `name` of `kind` whose first field starts at `at`.
    pub fn open(&mut self, name: &str, kind: &str, value: &str, at: &[u8]) {
        let kept = self.room();
        if kept {
            self.nodes += 1;
        } else {
            self.omit();
        }
        let offset = self.offset_of(at);
        let name = if kept { self.name(name) } else { String::new() };
        self.stack.push(Open {
            node: node(name, kind, value.to_string(), offset, 0),
            kept,
            omitted: 0,
        });
    }

    /// Sets the value text of the innermost open group (an array's element count, once read).
    pub fn set_value(&mut self, value: String) {
        if self.stack.len() > 1 {
            if let Some(o) = self.stack.last_mut() {
                o.node.value = value;
            }
        }
    }

    /// Closes the innermost group, which ends where `rest` starts.
    pub fn close(&mut self, rest: &[u8]) {
        let end = self.offset_of(rest);
        self.close_at(end);
    }

    fn close_at(&mut self, end: usize) {
        if self.stack.len() < 2 {
            return;
        }
        let Some(mut o) = self.stack.pop() else {
            return;
        };
        if !o.kept {
            return;
        }
        o.node.size = end.saturating_sub(o.node.offset);
        fill(&mut o.node, o.omitted, end);
        if let Some(parent) = self.stack.last_mut() {
            parent.node.children.push(o.node);
        }
    }

    /// Records a field that started at `at` and ends where `rest` starts.
    pub fn leaf(&mut self, name: &str, kind: &str, value: String, at: &[u8], rest: &[u8]) {
        self.leaf_typed(name, kind, value, Scalar::None, at, rest)
    }

    /// Like [`Trace::leaf`], with the field's typed value.
    pub fn leaf_typed(
        &mut self,
        name: &str,
        kind: &str,
        value: String,
        scalar: Scalar,
        at: &[u8],
        rest: &[u8],
    ) {
        if !self.room() {
            self.omit();
            return;
        }
        self.nodes += 1;
        let offset = self.offset_of(at);
        let size = self.offset_of(rest).saturating_sub(offset);
        let mut leaf = node(self.name(name), kind, value, offset, size);
        leaf.scalar = scalar;
        if let Some(o) = self.stack.last_mut() {
            o.node.children.push(leaf);
        }
    }

    /// The tree: groups still open (decoding stopped inside them) are closed at the end of the
    /// last field recorded in them.
    pub fn finish(mut self) -> Node {
        while self.stack.len() > 1 {
            let end = self.stack.last().map_or(0, |o| {
                o.node
                    .children
                    .last()
                    .map_or(o.node.offset, |c| c.offset + c.size)
            });
            self.close_at(end);
        }
        match self.stack.pop() {
            Some(mut root) => {
                let end = self.whole_len;
                fill(&mut root.node, root.omitted, end);
                root.node
            }
            None => node(String::new(), "", String::new(), 0, self.whole_len),
        }
    }
}

/// Ends `group` (which ends at `end`) with a `not_traced` node over the bytes after its last
/// child, when `omitted` fields were not traced in it.
fn fill(group: &mut Node, omitted: usize, end: usize) {
    if omitted == 0 {
        return;
    }
    let from = group
        .children
        .last()
        .map_or(group.offset, |c| c.offset + c.size);
    group.children.push(node(
        "not_traced".into(),
        "",
        format!("{omitted} more fields decoded but not shown (a tree keeps {MAX_TRACE_NODES})"),
        from,
        end.saturating_sub(from),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_fields_are_counted_and_the_tree_still_tiles() {
        // A frame of 4 + 300,000 one-byte elements, in an array group inside a struct.
        let n = 300_000;
        let frame = vec![0u8; 4 + n];
        let mut t = Trace::new(frame.len(), "root".into());
        t.leaf("size", "int32", "0".into(), &frame, &frame[4..]);
        t.open("body", "struct", "", &frame[4..]);
        t.camel = true;
        t.open("partition_indexes", "[]int8", "", &frame[4..]);
        for i in 0..n {
            t.open(&format!("E[{i}]"), "E", "struct", &frame[4 + i..]);
            t.leaf("v", "int8", "0".into(), &frame[4 + i..], &frame[5 + i..]);
            t.close(&frame[5 + i..]);
        }
        t.close(&frame[frame.len()..]);
        t.close(&frame[frame.len()..]);
        let root = t.finish();
        assert_eq!(root.untiled(), None);
        let array = &root.children[1].children[0];
        assert_eq!(array.name, "PartitionIndexes");
        let last = array.children.last().unwrap();
        assert_eq!(last.name, "not_traced");
        let shown = array.children.len() - 1;
        // Each element shown is two nodes; the root, size, body and array are four.
        assert_eq!(shown, (MAX_TRACE_NODES - 4) / 2);
        let omitted = 2 * n - 2 * shown;
        assert!(
            last.value.starts_with(&format!("{omitted} more fields")),
            "{}",
            last.value
        );
        assert_eq!(last.offset + last.size, frame.len());
    }

    #[test]
    fn groups_left_open_by_an_error_end_at_their_last_field() {
        let frame = [0u8; 20];
        let mut t = Trace::new(frame.len(), "root".into());
        t.open("header", "", "", &frame[4..]);
        t.leaf(
            "correlation_id",
            "int32",
            "0".into(),
            &frame[4..],
            &frame[8..],
        );
        let root = t.finish();
        let header = &root.children[0];
        assert_eq!((header.offset, header.size), (4, 4));
    }
}
