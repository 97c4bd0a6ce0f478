package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubmitRefusesHostileFolders: a results folder that would change the sbatch script (a newline
// adds a shell line, whitespace, quotes, a backslash or '#' cut the #SBATCH line, "hetjob" splits the
// job) is refused before anything is written or submitted, with an error naming the folder; a '%' is
// written as Slurm's "%%" so that the log lands in the folder given (not in one named by the job id).
// Issue 36: `fedbayes submit -o $'DIR/inj\ntouch DIR/PWNED\n#'` created DIR/PWNED on a cluster.
func TestSubmitRefusesHostileFolders(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	tests := []struct {
		name, dir, want string
	}{
		{"issue 36 newline", root + "/inj\ntouch " + root + "/PWNED\n#", "control character"},
		{"carriage return", root + "/a\rb", "control character"},
		{"tab", root + "/a\tb", "control character"},
		{"NUL", root + "/a\x00b", "control character"},
		{"line separator", root + "/a\u2028b", "control character"},
		{"invalid UTF-8", root + "/a\xffb", "control character"},
		{"space", root + "/my results", "sbatch reads specially"},
		{"single quote", root + "/it's", "sbatch reads specially"},
		{"double quote", root + `/a"b`, "sbatch reads specially"},
		{"backslash", root + `/a\b`, "sbatch reads specially"},
		{"hash", root + "/a#b", "sbatch reads specially"},
		{"hetjob", root + "/my-hetjob-runs", "heterogeneous job"},
		{"packjob", root + "/PackJob", "heterogeneous job"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakeSlurm(t, 1001)
			for _, dry := range []bool{true, false} {
				sub, err := Submit(ctx, Options{Spec: sweep(t, 2), SpecName: "test", Dir: tc.dir, Binary: executable(t), DryRun: dry})
				if sub != nil && sub.Script != "" {
					if text, rerr := os.ReadFile(sub.Script); rerr == nil {
						for _, l := range strings.Split(string(text), "\n") {
							if strings.HasPrefix(strings.TrimSpace(l), "touch") {
								t.Errorf("the script runs %q", l)
							}
						}
					}
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.dir)) {
					t.Fatalf("dry run %v: error %v, want one containing %q and naming the folder", dry, err, tc.want)
				}
				if names := entries(t, root); len(names) > 0 {
					t.Errorf("dry run %v: a refused submission created %q", dry, names)
				}
				if _, err := os.Stat(filepath.Join(fake, "submitted")); err == nil {
					t.Error("sbatch was called")
				}
				_, err = SubmitCommand(ctx, CommandOptions{Name: "cmd", Dir: tc.dir, Args: []string{"version"}, Binary: executable(t), DryRun: dry})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("SubmitCommand, dry run %v: error %v, want one containing %q", dry, err, tc.want)
				}
				if names := entries(t, root); len(names) > 0 {
					t.Errorf("SubmitCommand, dry run %v: a refused submission created %q", dry, names)
				}
			}
		})
	}
}

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestSubmitEscapesPercent: a '%' of the results folder reaches the --output line as "%%" (the
// character '%' in Slurm's filename patterns), so %j or %A of a folder are not replaced by Slurm.
func TestSubmitEscapesPercent(t *testing.T) {
	fakeSlurm(t, 1001)
	dir := filepath.Join(t.TempDir(), "100%j-done")
	sub, err := Submit(context.Background(), Options{Spec: sweep(t, 2), SpecName: "test", Dir: dir, Binary: executable(t), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(sub.Script)
	if err != nil {
		t.Fatal(err)
	}
	want := "#SBATCH --output=" + strings.ReplaceAll(dir, "%", "%%") + "/.slurm/logs/%A_%a.out\n"
	if !strings.Contains(string(text), want) {
		t.Errorf("script:\n%s\nlacks %q", text, want)
	}
	if !strings.Contains(string(text), " -o "+ShellQuote(dir)+" ") {
		t.Errorf("script:\n%s\nlacks the folder as one shell word", text)
	}
}

// TestRenderRefusesStrayPercent: an --output pattern with a '%' that is not one of Slurm's filename
// patterns (a folder's '%' not escaped) is refused.
func TestRenderRefusesStrayPercent(t *testing.T) {
	s := Script{JobName: "j", Tasks: []int{0}, Command: []string{"/bin/true"}}
	for out, ok := range map[string]bool{
		"/r/.slurm/logs/%A_%a.out": true, "/r/100%%/x/%A_%a.out": true, "/r/%5a.out": true, "/r/%j.out": true,
		"/r/100%/x/%A_%a.out": false, "/r/x%": false, "/r/%5": false, "/r/%q": false, "": false,
	} {
		s.Output = out
		_, err := s.Render()
		if (err == nil) != ok {
			t.Errorf("output %q: error %v, want ok %v", out, err, ok)
		}
	}
}

// TestRenderQuotesTheCommand: the words of the task's command are quoted shell words, and one with a
// control character is refused (it cannot break the line it is on).
func TestRenderQuotesTheCommand(t *testing.T) {
	s := Script{JobName: "j", Tasks: []int{0}, Output: "/r/%A_%a.out", Command: []string{"/opt/fed bayes/fedbayes", "run", "$(touch x)", "a'b;rm -rf /"}}
	text, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	want := `exec '/opt/fed bayes/fedbayes' run '$(touch x)' 'a'\''b;rm -rf /'` + "\n"
	if !strings.HasSuffix(text, want) {
		t.Errorf("script:\n%s\nwant it to end with %q", text, want)
	}
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b"} {
		s.Command = []string{"/bin/fedbayes", bad}
		if _, err := s.Render(); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("command word %q: error %v, want a control character refused", bad, err)
		}
	}
	s.Command = []string{"/bin/true"}
	s.Comment = []string{"a\nrm -rf /\rb"}
	text, err = s.Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "\n# a rm -rf / b\n") {
		t.Errorf("comment not kept on one line:\n%s", text)
	}
}

// TestExtraOptions: a user's sbatch option may not set an option fedbayes sets, by its name, by a
// getopt abbreviation of its long name (--arr is --array), in a group of short options, or as a
// second option on the same line; nor hold what sbatch reads specially in an #SBATCH line.
func TestExtraOptions(t *testing.T) {
	tests := []struct {
		extra, want string // want "" accepts
	}{
		{"--gres=gpu:1", ""},
		{"#SBATCH --account=lab", ""},
		{"  --account  lab ", ""},
		{"-A lab", ""},
		{"-pgpua", ""}, // -p takes the rest as its argument
		{"--exclusive", ""},
		{"--mail-type=END,FAIL", ""},
		{"--qos=high", ""},
		{"--array=3", "--array is set by fedbayes"},
		{"--arr=3", "abbreviation of --array"},
		{"--a=3", "abbreviation of --array"},
		{"--outp=/tmp/x", "abbreviation of --output"},
		{"--out /tmp/x", "abbreviation of --output"},
		{"--err=/tmp/x", "abbreviation of --error"},
		{"--job-n=x", "abbreviation of --job-name"},
		{"--pars", "abbreviation of --parsable"},
		{"--wra=ls", "abbreviation of --wrap"},
		{"--wrap=ls", "--wrap is set"},
		{"-a3", "-a is set"},
		{"-Qa3", "-a is set"},
		{"-vo /tmp/x", "-o is set"},
		{"-J x", "-J is set"},
		{"-e/tmp/x", "-e is set"},
		{"--gres=gpu:1 --array=5", "--array is set"},
		{"--gres=gpu:1 --arr=5", "abbreviation of --array"},
		{"--comment x y", "one option per -sbatch"},
		{"--", "ends sbatch's options"},
		{"--comment=a#b", "sbatch reads specially"},
		{"--comment='x --array=5'", "sbatch reads specially"},
		{`--comment="x"`, "sbatch reads specially"},
		{`--comment=a\ --array=5`, "sbatch reads specially"},
		{"--comment=hetjob", "heterogeneous job"},
		{"--gres=gpu:1\ntouch /tmp/PWNED", "one line"},
		{"--gres=gpu:1\r", "one line"},
		{"--gres=gpu:1\x0b", "one line"},
		{"gres=gpu:1", "must start with '-'"},
		{"-", "must start with '-'"},
	}
	for _, tc := range tests {
		r := Resources{Extra: []string{tc.extra}}
		err := r.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("-sbatch %q: %v", tc.extra, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("-sbatch %q: error %v, want one containing %q", tc.extra, err, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.extra)):
			t.Errorf("-sbatch %q: error %v does not name the option", tc.extra, err)
		}
		s := Script{JobName: "j", Tasks: []int{0}, Output: "/r/%A_%a.out", Command: []string{"/bin/true"}, Resources: r}
		if _, rerr := s.Render(); (rerr == nil) != (err == nil) {
			t.Errorf("-sbatch %q: Render error %v, Validate error %v", tc.extra, rerr, err)
		}
	}
}

// TestJobNameRefused: a job name or a partition holding "hetjob" is refused (sbatch would split
// the job there).
func TestJobNameRefused(t *testing.T) {
	if err := (Resources{Partition: "HetJob"}).Validate(); err == nil || !strings.Contains(err.Error(), "heterogeneous job") {
		t.Errorf("-partition HetJob: error %v", err)
	}
	fakeSlurm(t, 1001)
	dir := t.TempDir()
	_, err := Submit(context.Background(), Options{Spec: sweep(t, 2), SpecName: "test", Dir: dir, JobName: "my-hetjob", Binary: executable(t), DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "heterogeneous job") {
		t.Fatalf("error %v, want the job name refused", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, SlurmDir)); err == nil {
		t.Error("a refused submission created .slurm")
	}
}
