package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/data"
)

func init() {
	register(&command{name: "data", summary: "install datasets (make data), list what is installed, print the data folder", run: runData})
}

const dataUsage = "fedbayes data install|list|path [-dir DIR] (list: [-json]; path: [DATASET])"

func runData(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, dataUsage)
	}
	sub, rest := args[0], args[1:]
	argsUsage := map[string]string{"install": "", "list": "", "path": "[DATASET]"}
	if _, ok := argsUsage[sub]; !ok {
		if sub == "-h" || sub == "--help" || sub == "help" {
			fmt.Fprintln(stdout, "Usage: "+dataUsage)
			fmt.Fprintln(stdout, "  install  fetch Fashion-MNIST and scikit-learn's tables from Debian packages into the data folder")
			fmt.Fprintln(stdout, "  list     say which datasets are present and how to install the others")
			fmt.Fprintln(stdout, "  path     print the data folder, or the folder of one dataset")
			return nil
		}
		return fmt.Errorf("%w: unknown sub-command %q; %s", errUsage, sub, dataUsage)
	}
	fs := newFlagSet("data "+sub, argsUsage[sub], stdout)
	dir := fs.String("dir", data.Dir(), "data folder (default: $"+data.DirEnv+", else the user cache folder)")
	asJSON := fs.Bool("json", false, "list: print as JSON")
	if err := parseArgs(fs, rest, nil); err != nil {
		return err
	}
	if sub != "path" && fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q; %s", errUsage, fs.Args(), dataUsage)
	}
	switch sub {
	case "install":
		if err := data.Install(*dir, stdout); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "data folder: %s\n", *dir)
		return nil
	case "list":
		status := data.Status(*dir)
		if *asJSON {
			if err := writeJSON(stdout, status); err != nil {
				return err
			}
			return corruptError(status)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DATASET\tPRESENT\tPATH\tTO INSTALL")
		for _, a := range status {
			present, todo := "yes", ""
			switch {
			case a.Corrupt != "":
				present, todo = "CORRUPT", a.Corrupt
			case !a.Present:
				present, todo = "no", a.Install
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, present, a.Path, todo)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		return corruptError(status)
	default: // path
		if fs.NArg() > 1 {
			return fmt.Errorf("%w: path takes at most one dataset name; %s", errUsage, dataUsage)
		}
		if fs.NArg() == 0 {
			fmt.Fprintln(stdout, *dir)
			return nil
		}
		name := fs.Arg(0)
		for _, a := range data.Status(*dir) {
			if a.Name == name {
				fmt.Fprintln(stdout, a.Path)
				return nil
			}
		}
		return fmt.Errorf("%w: unknown dataset %q; known: %s", errUsage, name, strings.Join(data.Names(), ", "))
	}
}

// corruptError is an error naming the datasets whose files do not match the install manifest.
func corruptError(status []data.Availability) error {
	var bad []string
	for _, a := range status {
		if a.Corrupt != "" {
			bad = append(bad, a.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("data list: corrupt: %s (files differ from the SHA-256 recorded at install; see above)", strings.Join(bad, ", "))
}
