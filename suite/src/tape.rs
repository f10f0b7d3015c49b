//! A line read for the checker's fast path: a flat tape of nodes that borrows its strings
//! from the line (a string with an escape is the only one copied), with nothing allocated a
//! member or a value, and read by `jsonschema` as a representation of its own ([`Tape`]).
//!
//! It only ever says a line is unremarkable. A line it cannot read as plainly as that (not
//! JSON, too deep, a member name twice in an object) is not read here at all: the checker
//! then reads it into a `serde_json::Value`, which words every finding.

use jsonschema::json::{Array, Json, Node as SchemaNode, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cell::Cell;

mod read;

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

thread_local! {
    /// The nodes of the last line read on this thread, emptied, for the next line's: a line
    /// then costs no allocation of its nodes.
    static SPARE: Cell<Vec<Item<'static>>> = const { Cell::new(Vec::new()) };
}

/// The most nodes a spare vector keeps room for (2 MiB of them): a huge line's are freed.
const SPARE_NODES: usize = 1 << 16;

impl Drop for Doc<'_> {
    fn drop(&mut self) {
        let mut nodes = std::mem::take(&mut self.nodes);
        if nodes.capacity() > SPARE_NODES {
            return;
        }
        nodes.clear();
        SPARE.with(|spare| spare.set(unborrowed(nodes)));
    }
}

/// An emptied vector of nodes as one that borrows nothing, in the same allocation (a vector
/// collected from its own items of the same size is collected in place; there are none).
fn unborrowed(nodes: Vec<Item<'_>>) -> Vec<Item<'static>> {
    nodes.into_iter().map(|_| Item::Null).collect()
}

/// An empty vector with room for at least `len` nodes: the spare one when there is one.
fn spare_nodes<'a>(len: usize) -> Vec<Item<'a>> {
    let mut nodes: Vec<Item<'a>> = SPARE.with(Cell::take);
    nodes.reserve(len);
    nodes
}

impl<'a> Doc<'a> {
    /// The line's value, when it is JSON with no member name twice in an object (and no
    /// deeper than serde_json's own limit); else `None`.
    pub(crate) fn parse(text: &'a [u8]) -> Option<Doc<'a>> {
        let nodes = read::read(text)?;
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

    /// The number, when it is one.
    pub(crate) fn number(self) -> Option<&'d Number> {
        match self.item() {
            Item::Number(number) => Some(number),
            _ => None,
        }
    }

    /// The number as an unsigned integer, when it is one.
    pub(crate) fn u64(self) -> Option<u64> {
        self.number()?.as_u64()
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

/// Whether a member name appears twice in the object.
fn twice(members: Members<'_>) -> bool {
    // Small objects are the most: compared pair by pair, with nothing allocated, and first by
    // a key of each name's length and first bytes (most names differ there; a short name is
    // its key), so that names are compared whole only when their keys are equal.
    if members.len <= 12 {
        let mut seen: [(u64, &str); 12] = [(0, ""); 12];
        for (n, (name, _)) in members.iter().enumerate() {
            let key = name_key(name);
            if seen[..n]
                .iter()
                .any(|&(k, other)| k == key && other == name)
            {
                return true;
            }
            seen[n] = (key, name);
        }
        return false;
    }
    let mut names: Vec<&str> = members.iter().map(|(name, _)| name).collect();
    names.sort_unstable();
    names.windows(2).any(|pair| pair[0] == pair[1])
}

/// A name's length (its low byte) and first seven bytes, as one number.
fn name_key(name: &str) -> u64 {
    let mut bytes = [0u8; 8];
    let head = name.len().min(7);
    bytes[..head].copy_from_slice(&name.as_bytes()[..head]);
    bytes[7] = name.len().to_le_bytes()[0];
    u64::from_le_bytes(bytes)
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
    fn a_line_reads_into_the_nodes_of_the_line_before() {
        let first = br#"{"a":[1,2,"x\ny"],"b":{"c":null}}"#;
        let doc = Doc::parse(first).expect("JSON");
        let (at, room) = (doc.nodes.as_ptr() as usize, doc.nodes.capacity());
        drop(doc);
        let second = br#"{"d":"\u00e9","e":[true]}"#;
        let doc = Doc::parse(second).expect("JSON");
        assert_eq!(
            (doc.nodes.as_ptr() as usize, doc.nodes.capacity()),
            (at, room)
        );
        assert_eq!(doc.root().get("d").and_then(Node::str), Some("é"));
        drop(doc);
        // A huge line's nodes are not kept.
        let huge = format!("[{}0]", "0,".repeat(SPARE_NODES * 2));
        drop(Doc::parse(huge.as_bytes()).expect("JSON"));
        assert!(SPARE.with(Cell::take).capacity() <= SPARE_NODES);
    }

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

    /// Names twice are found however alike the other names are: sharing their first bytes,
    /// differing only in length, past the first seven bytes, or in objects too big for the
    /// pairwise comparison.
    #[test]
    fn a_name_twice_is_found_among_names_alike() {
        let names = [
            "",
            "a",
            "a\\u0000",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefgi",
            "abcdefghijklmnop",
            "abcdefghijklmnoq",
            "\\u00e9",
            "è",
            "ba",
            "\\u0061",
        ];
        let object = |names: &[&str]| {
            let members: Vec<String> = names.iter().map(|n| format!("\"{n}\":0")).collect();
            format!("{{{}}}", members.join(","))
        };
        // The first twelve are distinct; the last, "\u0061", is "a" written another way.
        let distinct = &names[..12];
        for take in [2, 5, 9, 12] {
            let some = &distinct[..take];
            assert!(Doc::parse(object(some).as_bytes()).is_some(), "{some:?}");
            for (i, name) in some.iter().enumerate() {
                let mut again = some.to_vec();
                again.insert(i / 2, name);
                assert!(Doc::parse(object(&again).as_bytes()).is_none(), "{again:?}");
            }
        }
        assert!(Doc::parse(object(&names).as_bytes()).is_none(), "{names:?}");
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

    #[test]
    fn it_reads_what_serde_json_reads_as_serde_json_reads_it() {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for path in crate::check::corpus_streams() {
            let bytes = std::fs::read(&path).expect("a corpus stream");
            lines.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
        for line in [
            r#"{"a":"\ud83d\ude00 \u00e9\u0000\"\\\/\b\f\n\r\t","b":"é日本"}"#,
            r#" { "a" : [ 1 , -2 , 0 , -0 , 1.5 , -1e5 , 2E+3 , 3e-2 , 1.0 ] } "#,
            "[18446744073709551615,18446744073709551616,-9223372036854775808,123456789012345678]",
            "[-123456789012345678,-1234567890123456789,99999999999999999999999]",
            "{\"a\":\"0123456789abcdef0123456789abcdef\\u0041\",\"\":{}}\r",
            r#"[true,false,null,[],{},[[]],"",""]"#,
        ] {
            lines.push(line.as_bytes().to_vec());
        }
        let deep = format!("{}{}", "[".repeat(127), "]".repeat(127));
        lines.push(deep.into_bytes());
        let plain = lines.len();
        // Each line again, broken in one place (a byte replaced, a byte removed, cut short),
        // at places a pseudo-random sequence picks.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % (below.max(1) as u64)).expect("small")
        };
        let odd = b"\"\\{}[],:0-.eE+ \t\x01\x1fu\xc3\xff\xe2tfn/";
        let mut broken_lines = Vec::new();
        for line in &lines {
            for _ in 0..4 {
                if line.is_empty() {
                    break;
                }
                let mut broken = line.clone();
                let at = next(line.len());
                match next(3) {
                    0 => broken[at] = odd[next(odd.len())],
                    1 => {
                        broken.remove(at);
                    }
                    _ => broken.truncate(at),
                }
                broken_lines.push(broken);
            }
        }
        lines.append(&mut broken_lines);
        let mut read = 0;
        let mut accepted = 0;
        for (n, line) in lines.iter().enumerate() {
            let ours = Doc::parse(line).map(|doc| doc.root().value());
            // The full path's reading: serde_json's, to any depth, names twice noted.
            let theirs = crate::json::parse(line).ok();
            let shown = String::from_utf8_lossy(line);
            if let Some(ours) = &ours {
                let theirs = theirs
                    .as_ref()
                    .expect("the full path reads what the tape reads");
                assert!(theirs.duplicates.is_empty(), "{shown}");
                assert_eq!(ours, &theirs.value, "{shown}");
                read += 1;
            }
            if let Some(theirs) = theirs.filter(|_| n < plain) {
                accepted += 1;
                let plainly = theirs.duplicates.is_empty() && depth(&theirs.value) <= 128;
                assert!(
                    ours.is_some() || !plainly,
                    "the full path reads it plainly and the tape does not: {shown}"
                );
            }
        }
        assert!(read > plain / 2, "{read} of {} lines read", lines.len());
        assert!(accepted > plain / 2);
    }

    /// How deeply arrays and objects nest in the value.
    fn depth(value: &Value) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}
