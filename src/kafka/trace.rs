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

/// One field (or group of fields) of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl Node {
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
/// build millions of nodes); past it fields are decoded but not traced, and the tree says so.
pub const MAX_TRACE_NODES: usize = 200_000;

/// The trace being recorded: the open groups, innermost last.
#[derive(Debug)]
pub struct Trace {
    /// Length of the whole frame, size prefix included.
    whole_len: usize,
    /// Open groups; the first is the root.
    stack: Vec<Node>,
    /// Body fields are named as the schema spells them (see the module documentation).
    pub camel: bool,
    /// Nodes recorded so far.
    nodes: usize,
}

impl Trace {
    /// A trace of a frame of `whole_len` bytes (size prefix included), under a root node
    /// named `root`.
    pub fn new(whole_len: usize, root: String) -> Self {
        Trace {
            whole_len,
            stack: vec![Node {
                name: root,
                kind: String::new(),
                value: String::new(),
                offset: 0,
                size: whole_len,
                children: Vec::new(),
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

    fn room(&mut self) -> bool {
        self.nodes += 1;
        self.nodes <= MAX_TRACE_NODES
    }

    /// Opens a group `name` of `kind` whose first field starts at `at`.
    pub fn open(&mut self, name: &str, kind: &str, value: &str, at: &[u8]) {
        let node = Node {
            name: self.name(name),
            kind: kind.to_string(),
            value: value.to_string(),
            offset: self.offset_of(at),
            size: 0,
            children: Vec::new(),
        };
        self.stack.push(node);
    }

    /// Sets the value text of the innermost open group (an array's element count, once read).
    pub fn set_value(&mut self, value: String) {
        if self.stack.len() > 1 {
            if let Some(node) = self.stack.last_mut() {
                node.value = value;
            }
        }
    }

    /// Closes the innermost group, which ends where `rest` starts.
    pub fn close(&mut self, rest: &[u8]) {
        let end = self.offset_of(rest);
        if self.stack.len() < 2 {
            return;
        }
        if let Some(mut node) = self.stack.pop() {
            node.size = end.saturating_sub(node.offset);
            self.push(node);
        }
    }

    /// Records a field that started at `at` and ends where `rest` starts.
    pub fn leaf(&mut self, name: &str, kind: &str, value: String, at: &[u8], rest: &[u8]) {
        let offset = self.offset_of(at);
        let node = Node {
            name: self.name(name),
            kind: kind.to_string(),
            value,
            offset,
            size: self.offset_of(rest).saturating_sub(offset),
            children: Vec::new(),
        };
        self.push(node);
    }

    fn push(&mut self, node: Node) {
        if !self.room() {
            return;
        }
        if let Some(parent) = self.stack.last_mut() {
            parent.children.push(node);
        }
    }

    /// The tree: groups still open (decoding stopped inside them) are closed at the end of the
    /// last field recorded in them. With more than [`MAX_TRACE_NODES`] nodes, the root's last
    /// child says how many were left out.
    pub fn finish(mut self) -> Node {
        while self.stack.len() > 1 {
            if let Some(mut node) = self.stack.pop() {
                let end = node
                    .children
                    .last()
                    .map_or(node.offset, |c| c.offset + c.size);
                node.size = end.saturating_sub(node.offset);
                if let Some(parent) = self.stack.last_mut() {
                    parent.children.push(node);
                }
            }
        }
        let mut root = self.stack.pop().unwrap_or(Node {
            name: String::new(),
            kind: String::new(),
            value: String::new(),
            offset: 0,
            size: self.whole_len,
            children: Vec::new(),
        });
        if self.nodes > MAX_TRACE_NODES {
            let at = root.children.last().map_or(0, |c| c.offset + c.size);
            root.children.push(Node {
                name: "not_traced".into(),
                kind: String::new(),
                value: format!(
                    "{} more fields decoded but not shown (more than {MAX_TRACE_NODES})",
                    self.nodes - MAX_TRACE_NODES
                ),
                offset: at,
                size: 0,
                children: Vec::new(),
            });
        }
        root
    }
}
