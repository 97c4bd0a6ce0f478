// Command fedbayes runs fedbayes from the terminal: environment checks, aggregation of toy
// Gaussians, federated runs, tables and figures. Run `fedbayes help` for the list of commands.
//
// Each command lives in its own file (cmd_*.go) and registers itself in init.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// command is one sub-command of fedbayes.
type command struct {
	name    string
	summary string
	// help, when set, is what `fedbayes NAME -h` says the command does, instead of the summary.
	help string
	// run executes the command with its arguments (after the command name), writing to stdout.
	run func(args []string, stdout io.Writer) error
}

var commands = map[string]*command{}

// register adds a command; called from init in each cmd_*.go file.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("fedbayes: command registered twice: " + c.name) // programming error, caught by tests
	}
	commands[c.name] = c
}

// notes receives what a command says besides its results: progress lines, skipped runs, hints. It
// is standard error, so that `fedbayes run ... > out.txt` shows the progress and leaves only the
// results in the file; runMain sets it to its stderr for the command it runs.
var notes io.Writer = os.Stderr

// errUsage marks an error whose message is a usage text (exit status 2).
var errUsage = errors.New("usage")

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs one command and returns the exit status. It never panics: a panic inside a command
// is reported as an internal error with its stack, so that a user sees a message, not a crash.
func runMain(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "fedbayes: internal error: %v\n%s\nPlease report this with the command you ran.\n", r, debug.Stack())
			status = 3
		}
	}()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		// As Go tools and most command-line programs: the same as `fedbayes version`.
		args = append([]string{"version"}, args[1:]...)
	}
	defer func(w io.Writer) { notes = w }(notes)
	notes = stderr
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fedbayes: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := c.run(args[1:], stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "fedbayes %s: %v\n", c.name, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "fedbayes: combine Bayesian neural networks in federated learning.")
	fmt.Fprintln(w, "\nUsage: fedbayes COMMAND [args and flags, in any order]\n       fedbayes --version\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun `fedbayes COMMAND -h` for a command's flags.")
}

// flagSetMade, when not nil, is called with every flag set newFlagSet makes (the tests read every
// command's flags from it).
var flagSetMade func(*flag.FlagSet)

// newFlagSet returns a flag set that reports errors instead of exiting, with a usage text: the usage
// line, what the command does (description) and the flags.
func newFlagSet(name, argsUsage string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("fedbayes "+name, flag.ContinueOnError)
	if flagSetMade != nil {
		flagSetMade(fs)
	}
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n", strings.TrimSpace("fedbayes "+name+" [flags] "+argsUsage))
		if d := description(name); d != "" {
			fmt.Fprintf(fs.Output(), "%s\n\n", d)
		}
		fmt.Fprintln(fs.Output(), "Flags:")
		fs.PrintDefaults()
	}
	return fs
}

// description is what the command name (or the command of a sub-command, "data install") does, for
// its -h: its help, else its summary as a sentence.
func description(name string) string {
	first, _, _ := strings.Cut(name, " ")
	c, ok := commands[first]
	switch {
	case !ok:
		return ""
	case c.help != "":
		return strings.TrimSpace(c.help)
	case c.summary == "":
		return ""
	}
	return strings.ToUpper(c.summary[:1]) + strings.TrimSuffix(c.summary[1:], ".") + "."
}

// writeJSON writes v to w as indented JSON with a final newline (the -json and -print flags).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
