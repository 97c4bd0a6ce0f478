package cluster

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzRenderScript renders the script of a submission from a hostile results folder, job name,
// user sbatch option and command argument, as Submit builds it. Render must either refuse, or
// return a script whose every line is one that fedbayes writes, with the user's values only inside
// #SBATCH lines (read as sbatch reads them: exactly the options fedbayes set and the user's option,
// none of them an option fedbayes owns, no heterogeneous-job separator, the log path unescaped back
// to the folder) or inside the quoted words of the exec line (read as bash reads them: exactly the
// command's words). No line of the script runs anything else.
func FuzzRenderScript(f *testing.F) {
	f.Add("/shared/res", "fedbayes-sweep", "--gres=gpu:1", "spec.json")
	f.Add("DIR/inj\ntouch DIR/PWNED\n#", "fedbayes-x", "--account=lab", "a b")
	f.Add("/r/100%j", "j", "--arr=3", "$(touch x)")
	f.Add("/r/it's here", "j", "--outp=/tmp/x", "x'y")
	f.Add("/r/x", "j", "-Qa5", "\n")
	f.Add("/r/x", "my-hetjob", "--gres=gpu:1 --array=5", "")
	f.Add(`/r/a\b#c`, "j", "#SBATCH -A lab", "%A")
	f.Fuzz(func(t *testing.T, folder, name, extra, arg string) {
		s := Script{
			JobName:   name,
			Tasks:     []int{0, 1, 3},
			Output:    OutputPattern(folder + "/.slurm/logs"),
			Resources: Resources{Partition: "gpu", MaxConcurrent: 2, Extra: []string{extra}},
			Command:   []string{"/opt/fedbayes", "run", folder + "/.slurm/spec.json", "-o", folder, arg, "-task-index"},
			TaskArg:   true,
			Comment:   []string{"fedbayes submit " + arg + ": written now", "fedbayes status " + folder},
		}
		text, err := s.Render()
		if err != nil {
			return
		}
		if err := checkScript(s, text); err != nil {
			t.Fatalf("%v\nscript:\n%s", err, text)
		}
	})
}

// checkScript checks the property of FuzzRenderScript for a rendered script.
func checkScript(s Script, text string) error {
	if !strings.HasSuffix(text, "\n") {
		return fmt.Errorf("the script does not end with a newline")
	}
	if i := strings.IndexFunc(text, func(r rune) bool { return r != '\n' && isControl(r) }); i >= 0 {
		return fmt.Errorf("the script holds a control character at byte %d", i)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if lines[0] != "#!/bin/bash" {
		return fmt.Errorf("first line %q", lines[0])
	}
	i := 1
	var words []string
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#SBATCH"); i++ {
		l := lines[i]
		if strings.ContainsAny(l, "\r\x00") {
			return fmt.Errorf("#SBATCH line %q holds a control character", l)
		}
		lower := strings.ToLower(l)
		if strings.Contains(lower, "hetjob") || strings.Contains(lower, "packjob") {
			return fmt.Errorf("#SBATCH line %q would split the job", l)
		}
		words = append(words, sbatchWords(l[len("#SBATCH"):])...)
	}
	want := []string{"--job-name=" + s.JobName, "--array=" + ArrayRange(s.Tasks) + fmt.Sprintf("%%%d", s.Resources.MaxConcurrent), "--output=" + s.Output, "--partition=" + s.Resources.Partition}
	extra := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s.Resources.Extra[0]), "#SBATCH"))
	want = append(want, extra...)
	if strings.Join(words, "\x00") != strings.Join(want, "\x00") {
		return fmt.Errorf("sbatch reads the options %q, want %q", words, want)
	}
	for _, w := range extra {
		if ownedBy(w) {
			return fmt.Errorf("the user's option word %q sets an option fedbayes owns", w)
		}
	}
	if got, wantLog := unescapePercent(strings.TrimSuffix(s.Output, "/%A_%a.out")), s.Command[4]+"/.slurm/logs"; got != wantLog {
		return fmt.Errorf("the log directory reads as %q, want %q", got, wantLog)
	}
	for ; i < len(lines) && strings.HasPrefix(lines[i], "# "); i++ {
	}
	fixed := []string{
		"set -euo pipefail",
		"# One run per task, on the CPUs Slurm gave it; no download of an XLA plugin.",
		`export GOMAXPROCS="${SLURM_CPUS_PER_TASK:-1}"`,
		`export GOMLX_NO_AUTO_INSTALL="${GOMLX_NO_AUTO_INSTALL:-1}"`,
	}
	for _, f := range fixed {
		if i >= len(lines) || lines[i] != f {
			return fmt.Errorf("line %d is not %q", i+1, f)
		}
		i++
	}
	if i != len(lines)-1 {
		return fmt.Errorf("%d lines after the fixed ones, want the exec line only", len(lines)-i)
	}
	got, err := bashWords(strings.TrimPrefix(lines[i], "exec "))
	if err != nil || !strings.HasPrefix(lines[i], "exec ") {
		return fmt.Errorf("exec line %q: %v", lines[i], err)
	}
	wantArgs := append(append([]string(nil), s.Command...), "$SLURM_ARRAY_TASK_ID")
	if strings.Join(got, "\x00") != strings.Join(wantArgs, "\x00") {
		return fmt.Errorf("the task runs %q, want %q", got, wantArgs)
	}
	return nil
}

// sbatchWords splits the rest of an #SBATCH line as sbatch does (src/sbatch/opt.c): words separated
// by whitespace, quotes and backslashes removed, an unescaped '#' ending the line.
func sbatchWords(l string) []string {
	var words []string
	var cur strings.Builder
	in, quoted, escape := false, byte(0), false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case escape:
			escape = false
		case c == '\\':
			escape, in = true, true
			continue
		case quoted != 0:
			if c == quoted {
				quoted = 0
				continue
			}
		case c == '"' || c == '\'':
			quoted, in = c, true
			continue
		case c == '#':
			i = len(l)
			continue
		case c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		cur.WriteByte(c)
		in = true
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// ownedBy reports whether a word of a user's option sets (by getopt's reading) an option fedbayes
// owns: a long option equal to or abbreviating one, or a short one anywhere in a group.
func ownedBy(w string) bool {
	if w == "--" {
		return true
	}
	if long, ok := strings.CutPrefix(w, "--"); ok {
		name, _, _ := strings.Cut(long, "=")
		for _, o := range []string{"array", "output", "error", "job-name", "parsable", "wrap"} {
			if strings.HasPrefix(o, name) {
				return true
			}
		}
		return false
	}
	if !strings.HasPrefix(w, "-") {
		return false
	}
	for i := 1; i < len(w); i++ {
		if strings.IndexByte("aoeJ", w[i]) >= 0 {
			return true
		}
		if strings.IndexByte(shortWithArgument, w[i]) >= 0 {
			return false
		}
	}
	return false
}

// unescapePercent reads "%%" back as '%'.
func unescapePercent(p string) string { return strings.ReplaceAll(p, "%%", "%") }

// bashWords splits a line into words as bash does for the forms ShellQuote writes: bare words of
// safe characters, single-quoted strings, "'\”" inside them, and the literal "$SLURM_ARRAY_TASK_ID"
// (returned as $SLURM_ARRAY_TASK_ID). Anything else (an unquoted special character) is an error.
func bashWords(l string) ([]string, error) {
	const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@%"
	var words []string
	i := 0
	for i < len(l) {
		var cur strings.Builder
		for i < len(l) && l[i] != ' ' {
			switch {
			case strings.HasPrefix(l[i:], `"$SLURM_ARRAY_TASK_ID"`):
				cur.WriteString("$SLURM_ARRAY_TASK_ID")
				i += len(`"$SLURM_ARRAY_TASK_ID"`)
			case l[i] == '\'':
				j := strings.IndexByte(l[i+1:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("unterminated quote at %d", i)
				}
				cur.WriteString(l[i+1 : i+1+j])
				i += j + 2
			case l[i] == '\\' && i+1 < len(l) && l[i+1] == '\'':
				cur.WriteByte('\'')
				i += 2
			case strings.IndexByte(safe, l[i]) >= 0:
				cur.WriteByte(l[i])
				i++
			default:
				return nil, fmt.Errorf("unquoted %q at %d", l[i], i)
			}
		}
		words = append(words, cur.String())
		for i < len(l) && l[i] == ' ' {
			i++
		}
	}
	return words, nil
}
