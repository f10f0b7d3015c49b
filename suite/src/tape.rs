//! A line read for the checker's fast path: a flat tape of nodes that borrows its strings
//! from the line (a string with an escape is the only one copied), with nothing allocated a
//! member or a value, and read by `jsonschema` as a representation of its own ([`Tape`]).
//!
//! It only ever says a line is unremarkable. A line it cannot read as plainly as that (not
//! JSON, too deep, a member name twice in an object) is not read here at all: the checker
//! then reads it into a `serde_json::Value`, which words every finding.

use jsonschema::json::{Array, Json, Node as SchemaNode, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// One line, parsed.
pub(crate) struct Doc<'a> {
    nodes: Vec<Item<'a>>,
}

/// A node of the tape. A container's nodes follow it: an object's as name and value, in the
/// order written; `end` is the index just past its last.
enum Item<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array { end: u32, len: u32 },
    Object { end: u32, len: u32 },
}

impl<'a> Doc<'a> {
    /// The line's value, when it is JSON with no member name twice in an object (and no
    /// deeper than serde_json's own limit); else `None`.
    pub(crate) fn parse(text: &'a [u8]) -> Option<Doc<'a>> {
        let mut nodes = Vec::with_capacity(text.len() / 8);
        let mut de = serde_json::Deserializer::from_slice(text);
        Fill { nodes: &mut nodes }.deserialize(&mut de).ok()?;
        de.end().ok()?;
        u32::try_from(nodes.len()).ok()?;
        Some(Doc { nodes })
    }

    /// The line's value.
    pub(crate) fn root(&self) -> Node<'_> {
        Node {
            nodes: &self.nodes,
            at: 0,
        }
    }
}

/// A value of a [`Doc`].
#[derive(Clone, Copy)]
pub(crate) struct Node<'d> {
    nodes: &'d [Item<'d>],
    at: u32,
}

impl<'d> Node<'d> {
    fn item(self) -> &'d Item<'d> {
        &self.nodes[self.at as usize]
    }

    /// The node after this one and all of its own.
    fn next(self) -> u32 {
        match *self.item() {
            Item::Array { end, .. } | Item::Object { end, .. } => end,
            _ => self.at + 1,
        }
    }

    fn at(self, at: u32) -> Node<'d> {
        Node {
            nodes: self.nodes,
            at,
        }
    }

    /// The string, when it is one.
    pub(crate) fn str(self) -> Option<&'d str> {
        match self.item() {
            Item::String(text) => Some(text),
            _ => None,
        }
    }

    /// The number as an unsigned integer, when it is one.
    pub(crate) fn u64(self) -> Option<u64> {
        match self.item() {
            Item::Number(number) => number.as_u64(),
            _ => None,
        }
    }

    /// Its members, when it is an object.
    pub(crate) fn object(self) -> Option<Members<'d>> {
        match *self.item() {
            Item::Object { end, len } => Some(Members {
                node: self,
                end,
                len,
            }),
            _ => None,
        }
    }

    /// Its elements, when it is an array.
    pub(crate) fn array(self) -> Option<Elements<'d>> {
        match *self.item() {
            Item::Array { end, len } => Some(Elements {
                node: self,
                end,
                len,
            }),
            _ => None,
        }
    }

    /// The member `name`, when it is an object that has one.
    pub(crate) fn get(self, name: &str) -> Option<Node<'d>> {
        self.object()?.get(name)
    }

    /// The same value, as serde_json holds it.
    pub(crate) fn value(self) -> Value {
        match self.item() {
            Item::Null => Value::Null,
            Item::Bool(b) => Value::Bool(*b),
            Item::Number(n) => Value::Number(n.clone()),
            Item::String(s) => Value::String(s.to_string()),
            Item::Array { .. } => Value::Array(
                self.array()
                    .into_iter()
                    .flat_map(Elements::iter)
                    .map(Node::value)
                    .collect(),
            ),
            Item::Object { .. } => Value::Object(
                self.object()
                    .into_iter()
                    .flat_map(Members::iter)
                    .map(|(name, value)| (name.to_owned(), value.value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }
}

/// An object's members.
#[derive(Clone, Copy)]
pub(crate) struct Members<'d> {
    node: Node<'d>,
    end: u32,
    len: u32,
}

impl<'d> Members<'d> {
    /// Each member's name and value, in the order written.
    pub(crate) fn iter(self) -> MemberIter<'d> {
        MemberIter {
            node: self.node,
            at: self.node.at + 1,
            end: self.end,
        }
    }

    /// The value of the member `name`.
    pub(crate) fn get(self, name: &str) -> Option<Node<'d>> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// An array's elements.
#[derive(Clone, Copy)]
pub(crate) struct Elements<'d> {
    node: Node<'d>,
    end: u32,
    len: u32,
}

impl<'d> Elements<'d> {
    /// Each element, in order.
    pub(crate) fn iter(self) -> ElementIter<'d> {
        ElementIter {
            node: self.node,
            at: self.node.at + 1,
            end: self.end,
        }
    }

    /// How many there are.
    pub(crate) fn len(self) -> usize {
        self.len as usize
    }
}

/// The members of an object, in the order written.
pub(crate) struct MemberIter<'d> {
    node: Node<'d>,
    at: u32,
    end: u32,
}

impl<'d> Iterator for MemberIter<'d> {
    type Item = (&'d str, Node<'d>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let name = self.node.at(self.at);
        let value = self.node.at(self.at + 1);
        self.at = value.next();
        Some((name.str().unwrap_or_default(), value))
    }
}

/// The elements of an array, in order.
pub(crate) struct ElementIter<'d> {
    node: Node<'d>,
    at: u32,
    end: u32,
}

impl<'d> Iterator for ElementIter<'d> {
    type Item = Node<'d>;

    fn next(&mut self) -> Option<Node<'d>> {
        if self.at >= self.end {
            return None;
        }
        let element = self.node.at(self.at);
        self.at = element.next();
        Some(element)
    }
}

/// Fills the tape with one value and what it holds.
struct Fill<'t, 'a> {
    nodes: &'t mut Vec<Item<'a>>,
}

impl<'de> DeserializeSeed<'de> for Fill<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Fill<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.nodes.push(Item::Null);
        Ok(())
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.nodes.push(Item::Bool(v));
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.nodes.push(Item::Number(v.into()));
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.nodes.push(Item::Number(v.into()));
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // serde_json reads no number that is not finite: a line with one is not read here.
        let number = Number::from_f64(v).ok_or_else(|| E::custom("not a finite number"))?;
        self.nodes.push(Item::Number(number));
        Ok(())
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<(), E> {
        self.nodes.push(Item::String(Cow::Borrowed(v)));
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.nodes.push(Item::String(Cow::Owned(v.to_owned())));
        Ok(())
    }

    fn visit_string<E>(self, v: String) -> Result<(), E> {
        self.nodes.push(Item::String(Cow::Owned(v)));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let start = self.nodes.len();
        self.nodes.push(Item::Array { end: 0, len: 0 });
        let mut len = 0u32;
        while seq.next_element_seed(Fill { nodes: self.nodes })?.is_some() {
            len += 1;
        }
        let end = index(self.nodes.len())?;
        self.nodes[start] = Item::Array { end, len };
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let start = self.nodes.len();
        self.nodes.push(Item::Object { end: 0, len: 0 });
        let mut len = 0u32;
        while map.next_key_seed(Fill { nodes: self.nodes })?.is_some() {
            map.next_value_seed(Fill { nodes: self.nodes })?;
            len += 1;
        }
        let end = index(self.nodes.len())?;
        self.nodes[start] = Item::Object { end, len };
        let members = Members {
            node: Node {
                nodes: self.nodes,
                at: index(start)?,
            },
            end,
            len,
        };
        if twice(members) {
            // A Value keeps the last of a name; the full path reads it so, and says so.
            return Err(A::Error::custom("a member name twice"));
        }
        Ok(())
    }
}

/// Whether a member name appears twice in the object.
fn twice(members: Members<'_>) -> bool {
    // Small objects are the most: compared pair by pair, with nothing allocated.
    if members.len <= 12 {
        let mut seen: [&str; 12] = [""; 12];
        for (n, (name, _)) in members.iter().enumerate() {
            if seen[..n].contains(&name) {
                return true;
            }
            seen[n] = name;
        }
        return false;
    }
    let mut names: Vec<&str> = members.iter().map(|(name, _)| name).collect();
    names.sort_unstable();
    names.windows(2).any(|pair| pair[0] == pair[1])
}

fn index<E: serde::de::Error>(at: usize) -> Result<u32, E> {
    u32::try_from(at).map_err(|_| E::custom("a line of more than 2^32 values"))
}

/// The tape as `jsonschema` reads it.
pub(crate) struct Tape;

impl Json for Tape {
    type Node<'a> = Node<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    // A lookup scans the members: a pass over them never costs more.
    const KEYS_PER_LOOKUP: usize = 1 << 16;
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(Node<'_>) -> T) -> T {
        let nodes = [Item::String(Cow::Borrowed(string))];
        f(Node {
            nodes: &nodes,
            at: 0,
        })
    }
}

impl<'a> SchemaNode<'a, Tape> for Node<'a> {
    type Object = Members<'a>;
    type Array = Elements<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<Members<'a>> {
        self.object()
    }

    fn as_array(&self) -> Option<Elements<'a>> {
        self.array()
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.str().map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self.item() {
            Item::Number(number) => Some(number),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.item() {
            Item::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.item(), Item::Null)
    }

    fn json_type(&self) -> JsonType {
        match self.item() {
            Item::Null => JsonType::Null,
            Item::Bool(_) => JsonType::Boolean,
            Item::Number(_) => JsonType::Number,
            Item::String(_) => JsonType::String,
            Item::Array { .. } => JsonType::Array,
            Item::Object { .. } => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (self.item(), expected) {
            (Item::String(text), Value::String(other)) => text == other,
            (Item::String(_), _) | (_, Value::String(_)) => false,
            _ => jsonschema::json::cmp::equal(&self.value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.value())
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(self.nodes.as_ptr() as usize, self.at))
    }
}

impl<'a> Object<'a, Tape> for Members<'a> {
    type Node = Node<'a>;
    type MemberName = &'a str;
    type MembersIter = MemberIter<'a>;

    fn len(&self) -> usize {
        self.len as usize
    }

    fn get(&self, key: &String) -> Option<Node<'a>> {
        Members::get(*self, key)
    }

    fn members(&self) -> MemberIter<'a> {
        self.iter()
    }
}

impl<'a> Array<'a, Tape> for Elements<'a> {
    type Node = Node<'a>;
    type ElementsIter = ElementIter<'a>;

    fn len(&self) -> usize {
        self.len as usize
    }

    fn elements(&self) -> ElementIter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tape_holds_what_a_value_holds() {
        let line = br#"{"b":[1,-2,3.5,"x\n",null,true,{"c":{}}],"a":"\u00e9","e":[]}"#;
        let doc = Doc::parse(line).expect("plain JSON");
        let value: Value = serde_json::from_slice(line).expect("JSON");
        assert_eq!(doc.root().value(), value);
        let root = doc.root();
        assert_eq!(root.get("a").and_then(Node::str), Some("é"));
        assert_eq!(
            root.get("b").and_then(Node::array).map(Elements::len),
            Some(7)
        );
        assert!(root.get("z").is_none());
        let names: Vec<&str> = root
            .object()
            .into_iter()
            .flat_map(Members::iter)
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["b", "a", "e"]);
    }

    #[test]
    fn what_it_cannot_read_plainly_is_left_to_the_full_path() {
        for line in [
            &br#"{"a":1,"a":2}"#[..],
            br#"{"a":{"b":1,"c":2,"b":3}}"#,
            br#"{"a":1"#,
            br#"{"a":1} x"#,
            b"\xff",
            br#"{"a":1e999}"#,
        ] {
            assert!(
                Doc::parse(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(Doc::parse(deep.as_bytes()).is_none());
    }
}
