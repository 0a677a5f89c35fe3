//! The one way a value is read from an XML list, so that what is read is exactly what
//! the signature covers. roxmltree's `Node::text` is the *first* text child: in
//! `<TSLSequenceNumber>1<!---->7</TSLSequenceNumber>` that is `1`, while canonical XML
//! (what the signature covers) drops the comment and sees `17`. So no reader of a list
//! calls `Node::text`; every value comes from [`value`].
//!
//! A value is its text as canonical XML holds it: the text children concatenated, CDATA
//! sections included (the parser turns them into text, as canonicalisation does) and
//! comments left out (canonicalisation of the whole document drops them, and a comment
//! in `SignedInfo` is markup, not text). A value holding markup that is signed content (a
//! processing instruction, an element) has no one reading, so it is refused.

use base64::Engine;
use roxmltree::{Node, NodeType};

/// The element's text as the signature covers it; None when it holds a processing
/// instruction or an element.
pub(crate) fn value(node: Node<'_, '_>) -> Option<String> {
    let mut text = String::new();
    for child in node.children() {
        match child.node_type() {
            NodeType::Text => text.push_str(child.text().unwrap_or("")),
            NodeType::Comment => {}
            _ => return None,
        }
    }
    Some(text)
}

/// [`value`], trimmed; None when absent, empty or holding markup.
pub(crate) fn trimmed(node: Option<Node<'_, '_>>) -> Option<String> {
    let text = value(node?)?;
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

/// [`value`] as base64, whitespace (line breaks, `&#13;`) ignored.
pub(crate) fn base64(node: Node<'_, '_>) -> Option<Vec<u8>> {
    let text: String = value(node)?
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}
