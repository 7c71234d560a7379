//! The object tree of one WriteTxnMarkers frame: every field with its byte offset and size,
//! in the shape of the seed's object tree (`../shared/seeds/WriteTxnMarkers.txt`).
//!
//! Input: the bytes of one whole frame, its 4-byte size prefix included, and (for a response)
//! the API version of its request. Output: a [`Node`] tree, and its text by [`render`]. The
//! fields are read by the same nom primitives as the decoders
//! ([`crate::kafka::primitives`]), following `WriteTxnMarkersRequest.json` and
//! `WriteTxnMarkersResponse.json` versions 0 to 2 and the request header v1/v2 and response
//! header v0/v1 of Kafka's `RequestHeader.json` / `ResponseHeader.json`. `--format tree`
//! renders it (`crate::output::text`), reached through the decoder table's
//! [`super::apis::Tree`].

use super::primitives::{
    array_len, boolean, int16, int32, int64, int8, nullable_string_bytes, tagged_fields, Budget,
    DecodeError, PResult,
};

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

/// The seed's text of a tree: one line per node, `+-- ` under its parent, `|   ` for each
/// open ancestor, then `name type = value [0xOFFSET, SIZEB]`.
pub fn render(root: &Node) -> String {
    let mut out = String::new();
    line(&mut out, root, "", "");
    out
}

fn line(out: &mut String, n: &Node, lead: &str, child_lead: &str) {
    out.push_str(lead);
    out.push_str(&n.name);
    if !n.kind.is_empty() {
        out.push(' ');
        out.push_str(&n.kind);
    }
    if !n.value.is_empty() {
        out.push_str(" = ");
        out.push_str(&n.value);
    }
    out.push_str(&format!(" [0x{:04x}, {}B]\n", n.offset, n.size));
    for (i, c) in n.children.iter().enumerate() {
        let last = i + 1 == n.children.len();
        let next = if last { "    " } else { "|   " };
        line(
            out,
            c,
            &format!("{child_lead}+-- "),
            &format!("{child_lead}{next}"),
        );
    }
}

/// Reads fields off a frame and records where each one was.
struct Walker<'a> {
    len: usize,
    rest: &'a [u8],
    budget: std::rc::Rc<Budget>,
}

type R<T> = Result<T, DecodeError>;

fn unwrap<'a, T>(r: PResult<'a, T>) -> R<(&'a [u8], T)> {
    r.map_err(|e| match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => e,
        nom::Err::Incomplete(_) => {
            DecodeError::at(&[], super::primitives::DecodeErrorKind::TruncatedBody)
        }
    })
}

impl<'a> Walker<'a> {
    fn at(&self) -> usize {
        self.len - self.rest.len()
    }

    /// Reads one primitive with `p`, as a leaf node named `name` of type `kind`.
    fn leaf<T>(
        &mut self,
        name: &str,
        kind: &str,
        p: impl FnOnce(&'a [u8]) -> PResult<'a, T>,
        show: impl FnOnce(&T) -> String,
    ) -> R<(Node, T)> {
        let offset = self.at();
        let (rest, v) = unwrap(p(self.rest))?;
        self.rest = rest;
        let node = Node {
            name: name.into(),
            kind: kind.into(),
            value: show(&v),
            offset,
            size: self.at() - offset,
            children: vec![],
        };
        Ok((node, v))
    }

    fn string(&mut self, name: &str, compact: bool, nullable: bool) -> R<Node> {
        let kind = if nullable {
            "nullable_string"
        } else {
            "string"
        };
        let (node, _) = self.leaf(
            name,
            kind,
            |i| nullable_string_bytes(i, compact),
            |v| {
                let text = match v {
                    None => "null".to_string(),
                    Some(b) => format!("{:?}", String::from_utf8_lossy(b)),
                };
                let len = v.map_or(-1, |b| b.len() as i64);
                if compact {
                    format!("{text} (compact, len+1={})", len + 1)
                } else {
                    format!("{text} (int16 len={len})")
                }
            },
        )?;
        Ok(node)
    }

    /// The fields `f` of a struct, then (flexible versions) its tagged-field section.
    fn close(&mut self, mut f: Vec<Node>, flexible: bool) -> R<Vec<Node>> {
        if flexible {
            f.push(self.tagged()?);
        }
        Ok(f)
    }

    fn tagged(&mut self) -> R<Node> {
        let budget = self.budget.clone();
        let (node, _) = self.leaf(
            "tagged_fields",
            "uvarint",
            |i| tagged_fields(i, &budget),
            |v| v.len().to_string(),
        )?;
        Ok(node)
    }

    /// An array of `elem_type` elements, each read by `elem`.
    fn array(
        &mut self,
        name: &str,
        elem_type: &str,
        compact: bool,
        min_size: usize,
        mut elem: impl FnMut(&mut Self, usize) -> R<Node>,
    ) -> R<Node> {
        let offset = self.at();
        let (len_node, count) = if compact {
            self.leaf(
                "length",
                "uvarint",
                |i| array_len(i, true, min_size),
                |n| format!("{} (compact, n+1)", n + 1),
            )?
        } else {
            self.leaf(
                "length",
                "int32",
                |i| array_len(i, false, min_size),
                usize::to_string,
            )?
        };
        if !self.budget.take(count) {
            return Err(DecodeError::at(
                self.rest,
                super::primitives::DecodeErrorKind::TooManyElements,
            ));
        }
        let mut children = vec![len_node];
        for n in 0..count {
            children.push(elem(self, n)?);
        }
        Ok(Node {
            name: name.into(),
            kind: format!("[]{elem_type}"),
            value: format!("{count} element{}", if count == 1 { "" } else { "s" }),
            offset,
            size: self.at() - offset,
            children,
        })
    }

    /// A struct named `name` of type `kind` whose fields `fields` reads.
    fn group(
        &mut self,
        name: &str,
        kind: &str,
        value: &str,
        fields: impl FnOnce(&mut Self) -> R<Vec<Node>>,
    ) -> R<Node> {
        let offset = self.at();
        let children = fields(self)?;
        Ok(Node {
            name: name.into(),
            kind: kind.into(),
            value: value.into(),
            offset,
            size: self.at() - offset,
            children,
        })
    }
}

/// The whole frame's node over `children`; bytes after the body (the decoders report them as
/// `trailing_bytes`) become one last child, so the tree always covers the frame.
fn root(w: Walker<'_>, name: String, mut children: Vec<Node>) -> Node {
    if !w.rest.is_empty() {
        children.push(Node {
            name: "trailing_bytes".into(),
            kind: "bytes".into(),
            value: format!("{} bytes the schema does not describe", w.rest.len()),
            offset: w.at(),
            size: w.rest.len(),
            children: vec![],
        });
    }
    Node {
        name,
        kind: String::new(),
        value: String::new(),
        offset: 0,
        size: w.len,
        children,
    }
}

fn frame_node(w: &mut Walker<'_>) -> R<Node> {
    w.group("Frame", "", "", |w| {
        Ok(vec![w.leaf("size", "int32", int32, i32::to_string)?.0])
    })
}

/// The tree of a WriteTxnMarkers request frame (size prefix included): `Frame`, the request
/// header (v1 for API version 0, v2 for 1 and 2), the body. Errors: the [`DecodeError`] of the
/// first field that does not fit (its path is not filled in here). The version is read from
/// the header; a version above 2 is laid out as version 2.
pub fn request_tree(frame: &[u8]) -> Result<Node, DecodeError> {
    let mut w = Walker {
        len: frame.len(),
        rest: frame,
        budget: Default::default(),
    };
    let version = frame
        .get(6..8)
        .map_or(0, |b| i16::from_be_bytes([b[0], b[1]]));
    let flexible = version >= 1;
    let header_version = if flexible { 2 } else { 1 };
    let mut children = vec![frame_node(&mut w)?];
    children.push(
        w.group(&format!("RequestHeader v{header_version}"), "", "", |w| {
            let f = vec![
                w.leaf("request_api_key", "int16", int16, |k| match k {
                    27 => "27 (WriteTxnMarkers)".into(),
                    k => k.to_string(),
                })?
                .0,
                w.leaf("request_api_version", "int16", int16, i16::to_string)?
                    .0,
                w.leaf("correlation_id", "int32", int32, i32::to_string)?.0,
                w.string("client_id", false, true)?,
            ];
            w.close(f, flexible)
        })?,
    );
    children.push(w.group("WriteTxnMarkersRequest", "struct", "", |w| {
        let f = vec![
            w.array("Markers", "WritableTxnMarker", flexible, 15, |w, n| {
                w.group(
                    &format!("WritableTxnMarker[{n}]"),
                    "WritableTxnMarker",
                    "struct",
                    |w| {
                        let mut f = vec![
                            w.leaf("ProducerId", "int64", int64, i64::to_string)?.0,
                            w.leaf("ProducerEpoch", "int16", int16, i16::to_string)?.0,
                            w.leaf("TransactionResult", "bool", boolean, |b| {
                                format!("{b} ({})", if *b { "COMMIT" } else { "ABORT" })
                            })?
                            .0,
                            w.array("Topics", "WritableTxnMarkerTopic", flexible, 2, |w, n| {
                                w.group(
                                    &format!("WritableTxnMarkerTopic[{n}]"),
                                    "WritableTxnMarkerTopic",
                                    "struct",
                                    |w| {
                                        let f = vec![
                                            w.string("Name", flexible, false)?,
                                            w.array(
                                                "PartitionIndexes",
                                                "int32",
                                                flexible,
                                                4,
                                                |w, n| {
                                                    Ok(w.leaf(
                                                        &format!("int32[{n}]"),
                                                        "int32",
                                                        int32,
                                                        i32::to_string,
                                                    )?
                                                    .0)
                                                },
                                            )?,
                                        ];
                                        w.close(f, flexible)
                                    },
                                )
                            })?,
                            w.leaf("CoordinatorEpoch", "int32", int32, i32::to_string)?
                                .0,
                        ];
                        if version >= 2 {
                            f.push(w.leaf("TransactionVersion", "int8", int8, i8::to_string)?.0);
                        }
                        w.close(f, flexible)
                    },
                )
            })?,
        ];
        w.close(f, flexible)
    })?);
    Ok(root(
        w,
        format!("WriteTxnMarkersRequest message v{version}"),
        children,
    ))
}

/// The tree of a WriteTxnMarkers response frame (size prefix included) to a request of API
/// version `version`: `Frame`, the response header (v0 for version 0, v1 for 1 and 2), the
/// body. Errors as for [`request_tree`].
pub fn response_tree(frame: &[u8], version: i16) -> Result<Node, DecodeError> {
    let mut w = Walker {
        len: frame.len(),
        rest: frame,
        budget: Default::default(),
    };
    let flexible = version >= 1;
    let header_version = if flexible { 1 } else { 0 };
    let mut children = vec![frame_node(&mut w)?];
    children.push(
        w.group(&format!("ResponseHeader v{header_version}"), "", "", |w| {
            let f = vec![w.leaf("correlation_id", "int32", int32, i32::to_string)?.0];
            w.close(f, flexible)
        })?,
    );
    children.push(w.group("WriteTxnMarkersResponse", "struct", "", |w| {
        let f = vec![w.array(
            "Markers",
            "WritableTxnMarkerResult",
            flexible,
            10,
            |w, n| {
                w.group(
                    &format!("WritableTxnMarkerResult[{n}]"),
                    "WritableTxnMarkerResult",
                    "struct",
                    |w| {
                        let f = vec![
                            w.leaf("ProducerId", "int64", int64, i64::to_string)?.0,
                            w.array("Topics", "WritableTxnMarkerTopicResult", flexible, 2, |w, n| {
                                w.group(
                                    &format!("WritableTxnMarkerTopicResult[{n}]"),
                                    "WritableTxnMarkerTopicResult",
                                    "struct",
                                    |w| {
                                        let f = vec![
                                            w.string("Name", flexible, false)?,
                                            w.array(
                                                "Partitions",
                                                "WritableTxnMarkerPartitionResult",
                                                flexible,
                                                6,
                                                |w, n| {
                                                    w.group(
                                                        &format!("WritableTxnMarkerPartitionResult[{n}]"),
                                                        "WritableTxnMarkerPartitionResult",
                                                        "struct",
                                                        |w| {
                                                            let f = vec![
                                                                w.leaf("PartitionIndex", "int32", int32, i32::to_string)?.0,
                                                                w.leaf("ErrorCode", "int16", int16, |c| {
                                                                    match super::api::ErrorCode(*c).name() {
                                                                        Some(name) => format!("{c} ({name})"),
                                                                        None => c.to_string(),
                                                                    }
                                                                })?
                                                                .0,
                                                            ];
                                                            w.close(f, flexible)
                                                        },
                                                    )
                                                },
                                            )?,
                                        ];
                                        w.close(f, flexible)
                                    },
                                )
                            })?,
                        ];
                        w.close(f, flexible)
                    },
                )
            },
        )?];
        w.close(f, flexible)
    })?);
    Ok(root(
        w,
        format!("WriteTxnMarkersResponse message v{version}"),
        children,
    ))
}
