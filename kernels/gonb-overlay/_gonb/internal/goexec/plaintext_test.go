package goexec

// fedbayes addition to GoNB (kernels/gonb-overlay), run by kernels/check-kernel:
// go test -overlay .build/gonb-overlay.json -run TestMarkdownToPlain github.com/janpfeifer/gonb/internal/goexec

import "testing"

func TestMarkdownToPlain(t *testing.T) {
	for _, c := range []struct{ name, md, want string }{
		{"empty", "", ""},
		{
			// What gopls v0.23.0 answers for plots.DisplayName (a module without pkg.go.dev links).
			"signature and doc",
			"```go\nfunc plots.DisplayName(id string) string\n```\n\n---\n\nDisplayName returns the display name of an internal id (DisplayNames), or the id itself.\n",
			"func plots.DisplayName(id string) string\n\nDisplayName returns the display name of an internal id (DisplayNames), or the id itself.",
		},
		{
			"links, inline code and the pkg.go.dev line",
			"Println formats using the default formats for its operands and writes to standard output. See [Printf](https://pkg.go.dev/fmt#Printf).\n\n---\n\n[`fmt.Println` on pkg.go.dev](https://pkg.go.dev/fmt#Println)",
			"Println formats using the default formats for its operands and writes to standard output. See Printf.\n\nfmt.Println on pkg.go.dev",
		},
		{
			"escapes and headings",
			"### Options\n\nA \\*Stopped error ends \\_one\\_ cell; a\\\\b stays a\\b.",
			"Options\n\nA *Stopped error ends _one_ cell; a\\b stays a\\b.",
		},
		{
			"code is kept verbatim",
			"Example:\n\n\tx := a_b * [c](d)\n\n```go\ntype T struct{ \\* }\n```",
			"Example:\n\n\tx := a_b * [c](d)\n\ntype T struct{ \\* }",
		},
		{"blank lines collapse", "\n\n---\n\na\n\n\n\nb\n\n", "a\n\nb"},
	} {
		if got := markdownToPlain(c.md); got != c.want {
			t.Errorf("%s: markdownToPlain(%q)\n = %q\nwant %q", c.name, c.md, got, c.want)
		}
	}
}
