package goexec

// fedbayes addition to GoNB (kernels/gonb-overlay): a file the overlay adds to package goexec,
// not a patched copy of an upstream file.

import (
	"regexp"
	"strings"
)

// markdownToPlain renders the Markdown that gopls answers a hover with (a ```go fenced signature,
// "---" rules, the doc comment as go/doc/comment prints Markdown) as plain text, for the text/plain
// of an inspect_reply: Jupyter Notebook 6's Shift-Tab tooltip shows only text/plain. Fenced and
// indented code is kept verbatim; elsewhere a rule becomes a blank line, a heading its title, a link
// its text, inline code its content, and a backslash escape the character it escapes. Runs of blank
// lines become one, and the result has no leading or trailing blank line.
func markdownToPlain(md string) string {
	var out []string
	fenced := false
	for _, line := range strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fenced = !fenced
			continue
		case fenced, strings.HasPrefix(line, "\t"), strings.HasPrefix(line, "    "):
			out = append(out, line)
			continue
		case mdRule.MatchString(trimmed):
			out = append(out, "")
			continue
		}
		line = mdHeading.ReplaceAllString(line, "")
		line = mdLink.ReplaceAllString(line, "$1")
		line = mdInlineCode.ReplaceAllString(line, "$1")
		line = mdEscape.ReplaceAllString(line, "$1")
		out = append(out, strings.TrimRight(line, " "))
	}
	var b strings.Builder
	blank := false
	for _, line := range out {
		if strings.TrimSpace(line) == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteString("\n")
			blank = false
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(line)
	}
	return b.String()
}

var (
	mdRule       = regexp.MustCompile(`^(-{3,}|\*{3,}|_{3,})$`)
	mdHeading    = regexp.MustCompile(`^#{1,6}\s+`)
	mdLink       = regexp.MustCompile(`\[([^\]]*)\]\([^)\s]*\)`)
	mdInlineCode = regexp.MustCompile("`([^`]*)`")
	mdEscape     = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
)
