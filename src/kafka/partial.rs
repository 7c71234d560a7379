//! A partial body: the fields of a frame cut short (by the capture's snapshot length, or by a
//! gap inside it) that lie wholly in its captured bytes, in wire order, up to the first field
//! that does not.
//!
//! Input: the field trace ([`super::trace`]) that the API's own body decoder recorded while it
//! decoded the captured bytes and stopped (`truncated_body`) at the first field cut off, so the
//! layout stays described once, in its decoder. Output: a [`PartialBody`], whose serde form is
//! the `body` object of a record marked `"truncated": true`: the same names as the whole
//! body's (Kafka's schema names in snake_case), arrays holding the elements decoded, the
//! element being decoded when the bytes ran out holding the fields read before it, and each
//! error code followed by its Kafka name as `error`. Fields never reached are absent, never
//! guessed: a partial body's arrays may be shorter than their counts said.

use super::api::ErrorCode;
use super::trace::{Node, Scalar};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// A value of a partial body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// An integer field.
    Int(i64),
    /// A BOOLEAN.
    Bool(bool),
    /// A STRING or UUID.
    Str(String),
    /// A null string or array.
    Null,
    /// An error code: written as the number, followed by an `error` field with its name.
    Error(i16),
    /// A field the whole body writes by name (`transaction_result`: `"COMMIT"`, `"ABORT"`).
    Named(&'static str),
    /// A struct: its fields decoded, in wire order.
    Fields(Vec<(String, Value)>),
    /// An array: its elements decoded, in wire order.
    List(Vec<Value>),
}

/// The decoded part of a body cut short: its fields in wire order (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartialBody {
    /// The body's top-level fields decoded.
    pub fields: Vec<(String, Value)>,
}

impl PartialBody {
    /// The partial body of the trace's group `body` (the node the body decoder's fields were
    /// recorded under).
    pub fn from_trace(body: &Node) -> PartialBody {
        PartialBody {
            fields: fields(body),
        }
    }
}

/// Nodes that hold no field of the body: an array's count, tagged fields (which a whole body
/// lists only when unknown ones are present), the untraced remainder of a huge frame.
fn structural(n: &Node) -> bool {
    matches!(n.name.as_str(), "length" | "tagged_fields" | "not_traced")
}

fn fields(group: &Node) -> Vec<(String, Value)> {
    group
        .children
        .iter()
        .filter(|c| !structural(c))
        .filter_map(|c| value(c).map(|v| (c.name.clone(), v)))
        .collect()
}

/// The value of one traced node: `None` for a node with no value of its own (a leaf recorded
/// without one, such as a walked body's bytes).
fn value(n: &Node) -> Option<Value> {
    if n.kind.starts_with("[]") && n.scalar == Scalar::None {
        // An array whose count was not captured, or whose first element was not reached, is
        // absent: an empty array would say it had none.
        let count = n
            .children
            .iter()
            .find(|c| c.name == "length")
            .map(|c| c.scalar.clone());
        let elems: Vec<Value> = n
            .children
            .iter()
            .filter(|c| !structural(c))
            .filter_map(|c| {
                if c.children.is_empty() && c.scalar != Scalar::None {
                    scalar(&c.scalar)
                } else {
                    // An element begun but with no field of it captured is left out.
                    Some(Value::Fields(fields(c))).filter(|f| f != &Value::Fields(Vec::new()))
                }
            })
            .collect();
        return match count {
            Some(Scalar::Int(c)) if c > 0 && elems.is_empty() => None,
            Some(_) => Some(Value::List(elems)),
            None => None,
        };
    }
    if n.scalar != Scalar::None {
        return scalar(&n.scalar);
    }
    if n.children.is_empty() {
        return None;
    }
    Some(Value::Fields(fields(n)))
}

fn scalar(s: &Scalar) -> Option<Value> {
    Some(match s {
        Scalar::None => return None,
        Scalar::Int(n) => Value::Int(*n),
        Scalar::Bool(b) => Value::Bool(*b),
        Scalar::Str(t) => Value::Str(t.clone()),
        Scalar::Null => Value::Null,
        Scalar::Error(c) => Value::Error(*c),
        Scalar::Named(n) => Value::Named(n),
    })
}

/// Serialises `fields` as one JSON object with the names a whole body gives beside a code:
/// an error code's as `error`, a Fetch request's `isolation_level`'s as `isolation`.
struct Object<'a>(&'a [(String, Value)]);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
            match v {
                Value::Error(c) => m.serialize_entry("error", &ErrorCode(*c).name())?,
                Value::Int(l) if k == "isolation_level" => {
                    let level = i8::try_from(*l).unwrap_or(i8::MAX);
                    m.serialize_entry(
                        "isolation",
                        crate::kafka::apis::fetch::isolation_name(level),
                    )?
                }
                _ => {}
            }
        }
        m.end()
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Int(n) => s.serialize_i64(*n),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Str(t) => s.serialize_str(t),
            Value::Null => s.serialize_unit(),
            Value::Error(c) => s.serialize_i16(*c),
            Value::Named(n) => s.serialize_str(n),
            Value::Fields(f) => Object(f).serialize(s),
            Value::List(l) => {
                let mut q = s.serialize_seq(Some(l.len()))?;
                for v in l {
                    q.serialize_element(v)?;
                }
                q.end()
            }
        }
    }
}

impl Serialize for PartialBody {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Object(&self.fields).serialize(s)
    }
}

/// Decodes the captured first bytes `body` of a body of `d` at `version` (a request's when
/// `request`), of which the last `missing` bytes were not captured: the fields wholly captured
/// and the path of the field decoding stopped in (`markers[0].topics[0].name`), or `None` when
/// decoding did not stop at the cut (a field in the captured bytes is malformed: the frame is
/// damaged, not only cut, and nothing of it is given).
pub fn decode(
    d: &super::apis::Decoder,
    request: bool,
    body: &[u8],
    version: i16,
    missing: usize,
) -> Option<(PartialBody, String)> {
    use super::primitives::Budget;
    let b = Budget::partial(body.len(), String::new(), missing);
    let decode = if request {
        d.decode_request
    } else {
        d.decode_response
    };
    let e = decode(body, version, &b).err()?;
    if !stopped_at_cut(&e) {
        return None;
    }
    let root = b.into_trace()?.finish();
    Some((PartialBody::from_trace(&root), e.path()))
}

/// Whether a decode of bytes cut short stopped at the cut: a field that ran past the bytes
/// captured (`truncated_body`, or a string longer than the bytes left), not a malformed one.
pub fn stopped_at_cut(e: &super::primitives::DecodeError) -> bool {
    use super::primitives::DecodeErrorKind;
    matches!(
        e.kind,
        DecodeErrorKind::TruncatedBody | DecodeErrorKind::StringLengthExceedsFrame
    )
}

impl PartialBody {
    /// The elements of top-level array `name` (none when absent).
    pub fn list(&self, name: &str) -> &[Value] {
        Value::list_in(&self.fields, name)
    }
}

impl Value {
    /// Field `name` of struct fields `f`.
    pub fn get<'a>(f: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
        f.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The elements of array field `name` of struct fields `f` (none when absent).
    pub fn list_in<'a>(f: &'a [(String, Value)], name: &str) -> &'a [Value] {
        match Value::get(f, name) {
            Some(Value::List(l)) => l,
            _ => &[],
        }
    }

    /// A struct's fields.
    pub fn fields(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Fields(f) => Some(f),
            _ => None,
        }
    }

    /// An integer's value (an error code's too).
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Error(c) => Some(i64::from(*c)),
            _ => None,
        }
    }
}
