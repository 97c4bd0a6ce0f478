package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Script is one sbatch job array: its resources, its tasks (array indices) and the command each
// task runs.
type Script struct {
	// JobName is the job's name (--job-name).
	JobName string
	// Tasks are the array indices, each a run's index in the spec's run list.
	Tasks []int
	// Output is the path pattern of each task's log (--output), e.g. DIR/.slurm/logs/%A_%a.out;
	// build it with OutputPattern, which escapes a '%' of the directory as Slurm's "%%".
	Output string
	// Resources are the sbatch options.
	Resources Resources
	// Command is the command each task runs, one argument per element; with TaskArg the task's
	// index ($SLURM_ARRAY_TASK_ID) is appended as the last argument.
	Command []string
	TaskArg bool
	// Comment lines are written at the top (what was submitted, when, by whom).
	Comment []string
}

// ArrayRange writes indices as a Slurm array specification: sorted, with runs of consecutive
// indices as ranges, e.g. [0 1 2 3 5 7 8] -> "0-3,5,7-8". Duplicates are dropped.
func ArrayRange(indices []int) string {
	s := append([]int(nil), indices...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] <= s[j]+1 {
			j++
		}
		if s[i] == s[j] {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Render returns the sbatch script. Every value that reaches the script is checked first, and an
// error names the value and what is wrong with it (see CheckSbatchValue and CheckShellWord): the
// #SBATCH lines hold only validated options, and the shell body holds the Command as quoted words.
func (s Script) Render() (string, error) {
	if len(s.Tasks) == 0 {
		return "", fmt.Errorf("cluster: a job array needs at least one task")
	}
	if len(s.Command) == 0 {
		return "", fmt.Errorf("cluster: no command for the tasks")
	}
	if err := s.Resources.Validate(); err != nil {
		return "", err
	}
	if !jobNameRe.MatchString(s.JobName) {
		return "", fmt.Errorf("cluster: job name %q: use letters, digits, '_', '-', '.', '+'", s.JobName)
	}
	if err := CheckSbatchValue("job name", s.JobName); err != nil {
		return "", err
	}
	if err := checkOutputPattern(s.Output); err != nil {
		return "", err
	}
	for _, a := range s.Command {
		if err := CheckShellWord("the task's command", a); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	line := func(format string, a ...any) { fmt.Fprintf(&b, "#SBATCH "+format+"\n", a...) }
	line("--job-name=%s", s.JobName)
	array := ArrayRange(s.Tasks)
	if s.Resources.MaxConcurrent > 0 {
		array += "%" + strconv.Itoa(s.Resources.MaxConcurrent)
	}
	line("--array=%s", array)
	line("--output=%s", s.Output)
	r := s.Resources
	if r.Partition != "" {
		line("--partition=%s", r.Partition)
	}
	if r.Time != "" {
		line("--time=%s", r.Time)
	}
	if r.CPUs > 0 {
		line("--cpus-per-task=%d", r.CPUs)
	}
	if r.Mem != "" {
		line("--mem=%s", r.Mem)
	}
	for _, e := range r.Extra {
		opt, _ := extraOption(e)
		line("%s", opt)
	}
	for _, c := range s.Comment {
		b.WriteString("# " + commentText(c) + "\n")
	}
	b.WriteString("set -euo pipefail\n")
	b.WriteString("# One run per task, on the CPUs Slurm gave it; no download of an XLA plugin.\n")
	b.WriteString("export GOMAXPROCS=\"${SLURM_CPUS_PER_TASK:-1}\"\n")
	b.WriteString("export GOMLX_NO_AUTO_INSTALL=\"${GOMLX_NO_AUTO_INSTALL:-1}\"\n")
	for _, l := range r.Setup {
		b.WriteString(l + "\n")
	}
	var args []string
	for _, a := range s.Command {
		args = append(args, ShellQuote(a))
	}
	if s.TaskArg {
		args = append(args, `"$SLURM_ARRAY_TASK_ID"`)
	}
	fmt.Fprintf(&b, "exec %s\n", strings.Join(args, " "))
	return b.String(), nil
}

// ShellQuote quotes s for bash: unchanged when it holds only safe characters, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// OutputPattern is the --output pattern of the tasks' logs in logDir: logDir with each '%' written
// as Slurm's "%%" (the character '%', not a replacement symbol such as %j), then /%A_%a.out.
func OutputPattern(logDir string) string {
	return strings.ReplaceAll(logDir, "%", "%%") + "/%A_%a.out"
}

// checkOutputPattern checks the --output value: a value for an #SBATCH line (CheckSbatchValue) whose
// '%' are Slurm replacement symbols (%A, %a, %j, ... or "%%"), never a stray one.
func checkOutputPattern(p string) error {
	if p == "" {
		return fmt.Errorf("cluster: no output pattern for the tasks' logs")
	}
	if err := CheckSbatchValue("the log path (--output)", p); err != nil {
		return err
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j == len(p) || !strings.ContainsRune("%AaJjNnstux", rune(p[j])) {
			return fmt.Errorf("cluster: the log path (--output) %q: a '%%' that is not a Slurm filename pattern (write a literal %% as %%%%: OutputPattern)", p)
		}
		i = j
	}
	return nil
}

// sbatchSpecial are the characters that sbatch reads specially in an #SBATCH line: whitespace
// separates options, quotes and a backslash are removed, '#' starts a comment. A value holding one
// would be cut, changed or would add an option, so values with them are refused.
const sbatchSpecial = " \t'\"\\#"

// CheckSbatchValue checks a value (a path, a name) that goes into an #SBATCH line: no control
// character (a newline would end the line and start a shell line of the script), none of the
// characters sbatch reads specially (whitespace, quotes, backslash, '#'), and not the words
// "hetjob" or "packjob" (sbatch splits the job at a line holding them). what names the value in the
// error. A '%' is not checked here: a path gets it escaped by OutputPattern.
func CheckSbatchValue(what, v string) error {
	if i := strings.IndexFunc(v, isControl); i >= 0 {
		return fmt.Errorf("cluster: %s %q holds a control character (%U), which the sbatch script cannot hold", what, v, []rune(v[i:])[0])
	}
	if i := strings.IndexAny(v, sbatchSpecial); i >= 0 {
		return fmt.Errorf("cluster: %s %q holds %q, which sbatch reads specially in an #SBATCH line (whitespace, quotes, backslash and '#' are refused); use another path or name", what, v, v[i])
	}
	lower := strings.ToLower(v)
	for _, w := range []string{"hetjob", "packjob"} {
		if strings.Contains(lower, w) {
			return fmt.Errorf("cluster: %s %q holds %q, at which sbatch splits a script into a heterogeneous job; use another path or name", what, v, w)
		}
	}
	return nil
}

// CheckShellWord checks a value that goes into the script's shell body as a quoted word (ShellQuote):
// no control character, so that each word stays on its line.
func CheckShellWord(what, v string) error {
	if i := strings.IndexFunc(v, isControl); i >= 0 {
		return fmt.Errorf("cluster: %s %q holds a control character (%U), which the sbatch script cannot hold", what, v, []rune(v[i:])[0])
	}
	return nil
}

// isControl reports the characters refused in every value of a script: ASCII control characters
// (newline, carriage return, NUL, ...), DEL and Unicode's other line and paragraph separators.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}

// commentText makes c one comment line: control characters become spaces.
func commentText(c string) string {
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, c)
}
