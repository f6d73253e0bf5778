package input

import "bytes"

// YAMLSeparator reports whether line is a "---" line that splits a YAML
// stream into documents: "---", then only white space or a comment. Every
// reader that cuts a YAML stream (pkg/objects decoding it, pkg/positions
// placing its fields) cuts it with this one rule, so that the documents,
// and the lines they start on, are the same for all of them.
func YAMLSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest, _, _ = bytes.Cut(rest, []byte("#"))
	return len(bytes.TrimSpace(rest)) == 0
}

// LeadingComments counts the lines at the start of doc that are blank or
// hold only a comment: the document's content starts that many lines
// after its first. A document of nothing else has them all.
func LeadingComments(doc []byte) int {
	n := 0
	for _, l := range bytes.Split(doc, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) != 0 && t[0] != '#' {
			return n
		}
		n++
	}
	return n
}
