//! Canonical XML (1.0, 1.1 and exclusive 1.0) of the two node-sets an enveloped trusted
//! list signature covers: the whole document less the `ds:Signature` subtree, and one
//! element's subtree (`SignedInfo`, `SignedProperties`). Iterative (a deep document
//! cannot overflow the stack) and total: what it cannot render exactly is an error.
//!
//! Prefixes come from the source text (roxmltree keeps positions, not prefixes), and
//! values from the parsed data model (attribute-value and line-end normalisation done).

use roxmltree::{Node, NodeId, NodeType};

const NS_XML: &str = "http://www.w3.org/XML/1998/namespace";

/// The canonicalisation algorithms the profile allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Inclusive10,
    Inclusive11,
    /// Exclusive C14N 1.0, with the `InclusiveNamespaces` `PrefixList` (`#default` for
    /// the default namespace).
    Exclusive(Vec<String>),
}

/// An algorithm URI: its method and whether comments are kept.
pub fn method(uri: &str, prefix_list: Vec<String>) -> Option<(Method, bool)> {
    Some(match uri {
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315" => (Method::Inclusive10, false),
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments" => {
            (Method::Inclusive10, true)
        }
        "http://www.w3.org/2006/12/xml-c14n11" => (Method::Inclusive11, false),
        "http://www.w3.org/2006/12/xml-c14n11#WithComments" => (Method::Inclusive11, true),
        "http://www.w3.org/2001/10/xml-exc-c14n#" => (Method::Exclusive(prefix_list), false),
        "http://www.w3.org/2001/10/xml-exc-c14n#WithComments" => {
            (Method::Exclusive(prefix_list), true)
        }
        _ => return None,
    })
}

/// Why a node-set cannot be canonicalised exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct C14nError(pub &'static str);

/// The document less the subtree at `omit` (the enveloped-signature transform, or XPath
/// Filter 2.0 subtracting the one signature), comments removed as for `URI=""`.
pub fn document_without(
    doc: &roxmltree::Document<'_>,
    omit: NodeId,
    method: &Method,
) -> Result<Vec<u8>, C14nError> {
    let mut out = Vec::new();
    let mut seen_root = false;
    for child in doc.root().children() {
        match child.node_type() {
            NodeType::Element => {
                render_tree(child, Some(omit), method, false, &mut out)?;
                seen_root = true;
            }
            NodeType::PI => {
                if seen_root {
                    out.push(b'\n');
                }
                render_pi(child, &mut out);
                if !seen_root {
                    out.push(b'\n');
                }
            }
            // Comments are not in a `URI=""` node-set; text outside the root is
            // whitespace, which canonical XML drops.
            _ => {}
        }
    }
    Ok(out)
}

/// The subtree of `apex` (an element and its descendants), as an element's own
/// reference or `SignedInfo`'s canonicalisation sees it.
pub fn subtree(apex: Node<'_, '_>, method: &Method, comments: bool) -> Result<Vec<u8>, C14nError> {
    let mut out = Vec::new();
    render_tree(apex, None, method, comments, &mut out)?;
    Ok(out)
}

/// One rendered namespace: prefix ("" for the default) and URI.
type Ns<'a> = (&'a str, &'a str);

fn render_tree(
    apex: Node<'_, '_>,
    omit: Option<NodeId>,
    method: &Method,
    comments: bool,
    out: &mut Vec<u8>,
) -> Result<(), C14nError> {
    // The namespaces in effect at each open output element (inclusive: in scope;
    // exclusive: rendered by it or an output ancestor).
    let mut effect: Vec<Vec<Ns<'_>>> = vec![Vec::new()];
    let mut skipping: Option<NodeId> = None;
    for edge in traverse(apex) {
        match edge {
            Edge::Open(node) => {
                if skipping.is_some() {
                    continue;
                }
                if Some(node.id()) == omit {
                    skipping = Some(node.id());
                    continue;
                }
                match node.node_type() {
                    NodeType::Element => {
                        let parent = effect.last().cloned().unwrap_or_default();
                        let now = open_element(node, node == apex, &parent, method, out)?;
                        effect.push(now);
                    }
                    NodeType::Text => escape_text(node.text().unwrap_or(""), out),
                    NodeType::Comment if comments => {
                        out.extend_from_slice(b"<!--");
                        out.extend_from_slice(node.text().unwrap_or("").as_bytes());
                        out.extend_from_slice(b"-->");
                    }
                    NodeType::PI => render_pi(node, out),
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if skipping == Some(node.id()) {
                    skipping = None;
                    continue;
                }
                if skipping.is_none() && node.is_element() {
                    effect.pop();
                    out.extend_from_slice(b"</");
                    out.extend_from_slice(qname(node)?.as_bytes());
                    out.push(b'>');
                }
            }
        }
    }
    Ok(())
}

/// Entering or leaving a node, in document order.
enum Edge<'a, 'i> {
    Open(Node<'a, 'i>),
    Close(Node<'a, 'i>),
}

/// Every node of the subtree at `apex`, opened and closed, without recursion.
fn traverse<'a, 'i>(apex: Node<'a, 'i>) -> impl Iterator<Item = Edge<'a, 'i>> {
    let mut next = Some(Edge::Open(apex));
    std::iter::from_fn(move || {
        let current = next.take()?;
        next = match current {
            Edge::Open(n) => Some(match n.first_child() {
                Some(c) => Edge::Open(c),
                None => Edge::Close(n),
            }),
            Edge::Close(n) if n == apex => None,
            Edge::Close(n) => match n.next_sibling() {
                Some(s) => Some(Edge::Open(s)),
                None => n.parent().map(Edge::Close),
            },
        };
        Some(current)
    })
}

/// Writes the start tag; returns the namespaces in effect for the element's children.
fn open_element<'a>(
    node: Node<'a, '_>,
    is_apex: bool,
    parent: &[Ns<'a>],
    method: &Method,
    out: &mut Vec<u8>,
) -> Result<Vec<Ns<'a>>, C14nError> {
    let name = qname(node)?;
    let own_prefix = name.split_once(':').map_or("", |(p, _)| p);
    let in_scope: Vec<Ns<'a>> = node
        .namespaces()
        .map(|ns| (ns.name().unwrap_or(""), ns.uri()))
        .filter(|(p, uri)| !(p.is_empty() && uri.is_empty()))
        .collect();
    let lookup = |set: &[Ns<'a>], prefix: &str| -> &'a str {
        set.iter()
            .find(|(p, _)| *p == prefix)
            .map_or("", |(_, u)| *u)
    };
    let mut attrs: Vec<(&'a str, &'a str, String, &'a str)> = Vec::new(); // (ns, local, qname, value)
    let source = node.document().input_text();
    for a in node.attributes() {
        let qn = source
            .get(a.range_qname())
            .ok_or(C14nError("attribute name out of range"))?;
        attrs.push((
            a.namespace().unwrap_or(""),
            a.name(),
            qn.to_owned(),
            a.value(),
        ));
    }
    if is_apex && !matches!(method, Method::Exclusive(_)) {
        inherit_xml_attributes(node, method, &mut attrs)?;
    }
    // Which prefixes to consider, and the effect map the children see.
    let (candidates, mut next): (Vec<&str>, Vec<Ns<'a>>) = match method {
        Method::Exclusive(list) => {
            let mut used: Vec<&str> = vec![own_prefix];
            for (_, _, qn, _) in &attrs {
                if let Some((p, _)) = qn.split_once(':') {
                    if let Some(p) = in_scope_prefix(&in_scope, p) {
                        used.push(p);
                    }
                }
            }
            for p in list {
                if p == "#default" {
                    used.push("");
                } else if let Some(p) = in_scope_prefix(&in_scope, p) {
                    used.push(p);
                }
            }
            (used, parent.to_vec())
        }
        // The default namespace is a candidate even when none is in scope: an output
        // ancestor's may need `xmlns=""`.
        _ => (
            std::iter::once("")
                .chain(in_scope.iter().map(|(p, _)| *p))
                .collect(),
            in_scope.clone(),
        ),
    };
    let mut decls: Vec<Ns<'a>> = Vec::new();
    for p in candidates {
        if decls.iter().any(|(q, _)| *q == p) {
            continue;
        }
        let uri = lookup(&in_scope, p);
        if uri.is_empty() && !p.is_empty() {
            continue; // not in scope (an unused PrefixList entry)
        }
        if lookup(parent, p) != uri {
            decls.push((p, uri));
        }
    }
    if let Method::Exclusive(_) = method {
        for &(p, u) in &decls {
            next.retain(|(q, _)| *q != p);
            next.push((p, u));
        }
    }
    decls.sort_by(|a, b| a.0.cmp(b.0));
    attrs.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    out.push(b'<');
    out.extend_from_slice(name.as_bytes());
    for (p, uri) in decls {
        out.extend_from_slice(if p.is_empty() { b" xmlns" } else { b" xmlns:" });
        out.extend_from_slice(p.as_bytes());
        out.extend_from_slice(b"=\"");
        escape_attr(uri, out);
        out.push(b'"');
    }
    for (_, _, qn, value) in attrs {
        out.push(b' ');
        out.extend_from_slice(qn.as_bytes());
        out.extend_from_slice(b"=\"");
        escape_attr(value, out);
        out.push(b'"');
    }
    out.push(b'>');
    Ok(next)
}

/// The prefix as a `&'a str` of the in-scope set (so it lives as long as the tree);
/// None when it is not in scope (`xml`, or an unused `PrefixList` entry).
fn in_scope_prefix<'a>(in_scope: &[Ns<'a>], p: &str) -> Option<&'a str> {
    in_scope.iter().find(|(q, _)| *q == p).map(|(q, _)| *q)
}

/// Inclusive canonicalisation of a subtree carries the `xml:` attributes of the apex's
/// ancestors (1.0: all; 1.1: `xml:lang` and `xml:space`, and `xml:base` would need the
/// fix-up 1.1 defines, which is refused rather than approximated).
fn inherit_xml_attributes<'a>(
    apex: Node<'a, '_>,
    method: &Method,
    attrs: &mut Vec<(&'a str, &'a str, String, &'a str)>,
) -> Result<(), C14nError> {
    for ancestor in apex.ancestors().skip(1).filter(Node::is_element) {
        for a in ancestor.attributes() {
            if a.namespace() != Some(NS_XML) {
                continue;
            }
            let name = a.name();
            if attrs
                .iter()
                .any(|(ns, local, _, _)| *ns == NS_XML && *local == name)
            {
                continue;
            }
            let wanted = match method {
                Method::Inclusive11 if name == "base" => {
                    return Err(C14nError("xml:base above a signed subtree (c14n 1.1)"))
                }
                Method::Inclusive11 => name == "lang" || name == "space",
                _ => true,
            };
            if wanted {
                attrs.push((NS_XML, name, format!("xml:{name}"), a.value()));
            }
        }
    }
    Ok(())
}

/// The element's qualified name as written: the source text after `<`.
fn qname<'a>(node: Node<'a, '_>) -> Result<&'a str, C14nError> {
    let source = node.document().input_text();
    let start = node.range().start + 1;
    let rest = source
        .get(start..)
        .ok_or(C14nError("element out of range"))?;
    let end = rest
        .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .unwrap_or(rest.len());
    let name = &rest[..end];
    if name.rsplit(':').next() != Some(node.tag_name().name()) {
        return Err(C14nError("element name does not match its source"));
    }
    Ok(name)
}

fn render_pi(node: Node<'_, '_>, out: &mut Vec<u8>) {
    if let Some(pi) = node.pi() {
        out.extend_from_slice(b"<?");
        out.extend_from_slice(pi.target.as_bytes());
        if let Some(value) = pi.value.filter(|v| !v.is_empty()) {
            out.push(b' ');
            out.extend_from_slice(value.as_bytes());
        }
        out.extend_from_slice(b"?>");
    }
}

fn escape_text(text: &str, out: &mut Vec<u8>) {
    for b in text.bytes() {
        match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'\r' => out.extend_from_slice(b"&#xD;"),
            _ => out.push(b),
        }
    }
}

fn escape_attr(text: &str, out: &mut Vec<u8>) {
    for b in text.bytes() {
        match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'\t' => out.extend_from_slice(b"&#x9;"),
            b'\n' => out.extend_from_slice(b"&#xA;"),
            b'\r' => out.extend_from_slice(b"&#xD;"),
            _ => out.push(b),
        }
    }
}
