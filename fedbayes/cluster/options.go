package cluster

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Resources are the sbatch options of a submission.
type Resources struct {
	// Partition is the Slurm partition (-p); "" leaves the cluster's default.
	Partition string
	// Time is the time limit of each task (--time), in a Slurm format such as "30", "2:00:00" or
	// "1-12:00:00"; "" leaves the partition's default.
	Time string
	// CPUs is the number of CPUs of each task (--cpus-per-task); 0 leaves the default (1). The
	// task runs with GOMAXPROCS set to it.
	CPUs int
	// Mem is the memory of each task (--mem), e.g. "4G"; "" leaves the default.
	Mem string
	// MaxConcurrent limits how many tasks of the array run at once (the %N of --array); 0 means no
	// limit.
	MaxConcurrent int
	// Extra are more sbatch options, one per line ("--gres=gpu:1" or "#SBATCH --gres=gpu:1").
	Extra []string
	// Setup are shell lines run before fedbayes in each task (e.g. "module load cuda").
	Setup []string
}

var (
	timeRe      = regexp.MustCompile(`^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE|infinite|unlimited)$`)
	memRe       = regexp.MustCompile(`^\d+[KMGT]?$`)
	partitionRe = regexp.MustCompile(`^[A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*$`)
	jobNameRe   = regexp.MustCompile(`^[A-Za-z0-9_.+\-]+$`)
)

// ownedLong and ownedShort are the sbatch options the script sets itself (or that would change how
// fedbayes reads sbatch's answer); Extra may not set them, by their name, by an abbreviation of the
// long name (sbatch's getopt_long accepts any unambiguous prefix: --arr is --array) or in a group of
// short options (-Qa5 is -Q -a 5).
var (
	ownedLong  = []string{"array", "output", "error", "job-name", "parsable", "wrap"}
	ownedShort = map[byte]string{'a': "array", 'o': "output", 'e': "error", 'J': "job-name"}
)

// shortWithArgument are sbatch's short options that take an argument: in a group of short options
// the rest of the group is that argument (-pgpu is -p gpu). Any other letter is read as a flag, so
// the letters after it are checked too (the cautious reading).
const shortWithArgument = "AaBbCcDdeFGiJLMmNnopqStUwx"

// Validate checks every option and names the first that is wrong.
func (r Resources) Validate() error {
	if r.Partition != "" && !partitionRe.MatchString(r.Partition) {
		return fmt.Errorf("cluster: -partition %q: not a partition name (letters, digits, '_', '-', '.', comma-separated)", r.Partition)
	}
	if err := CheckSbatchValue("-partition", r.Partition); err != nil {
		return err
	}
	if r.Time != "" && !timeRe.MatchString(r.Time) {
		return fmt.Errorf("cluster: -time %q: not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)", r.Time)
	}
	if r.CPUs < 0 {
		return fmt.Errorf("cluster: -cpus %d: must be at least 1 (0 for the cluster's default)", r.CPUs)
	}
	if r.Mem != "" && !memRe.MatchString(r.Mem) {
		return fmt.Errorf("cluster: -mem %q: not a Slurm memory size (a number with an optional K, M, G or T, e.g. 4G)", r.Mem)
	}
	if r.MaxConcurrent < 0 {
		return fmt.Errorf("cluster: -max %d: must be positive (0 for no limit)", r.MaxConcurrent)
	}
	for i, line := range r.Extra {
		opt, err := extraOption(line)
		if err != nil {
			return fmt.Errorf("cluster: -sbatch line %d %q: %w", i+1, line, err)
		}
		_ = opt
	}
	for i, line := range r.Setup {
		if strings.ContainsAny(line, "\n\r\x00") {
			return fmt.Errorf("cluster: -setup line %d %q: must be one line", i+1, line)
		}
	}
	return nil
}

// extraOption returns the sbatch option of an extra line, without the #SBATCH prefix: one option,
// with its value after '=' or a space, holding none of the characters sbatch reads specially in an
// #SBATCH line (CheckSbatchValue), and none of the options fedbayes sets (checkNotOwned).
func extraOption(line string) (string, error) {
	if strings.IndexFunc(line, isControl) >= 0 {
		return "", fmt.Errorf("must be one line, without control characters")
	}
	opt := strings.TrimSpace(line)
	opt = strings.TrimSpace(strings.TrimPrefix(opt, "#SBATCH"))
	if !strings.HasPrefix(opt, "-") || opt == "-" {
		return "", fmt.Errorf("not an sbatch option (it must start with '-', e.g. --gres=gpu:1)")
	}
	fields := strings.Fields(opt)
	if len(fields) > 2 {
		return "", fmt.Errorf("one option per -sbatch (with its value), not %d words", len(fields))
	}
	for _, f := range fields {
		if err := CheckSbatchValue("word", f); err != nil {
			return "", errors.New(strings.TrimPrefix(err.Error(), "cluster: "))
		}
		if strings.HasPrefix(f, "-") {
			if err := checkNotOwned(f); err != nil {
				return "", err
			}
		}
	}
	return strings.Join(fields, " "), nil
}

// checkNotOwned refuses a word of an extra option that sets one of the options fedbayes sets: the
// option itself, an abbreviation of it, or a short option in a group; also "--", which would end
// sbatch's options.
func checkNotOwned(w string) error {
	if w == "--" {
		return fmt.Errorf("-- ends sbatch's options")
	}
	if long, ok := strings.CutPrefix(w, "--"); ok {
		name, _, _ := strings.Cut(long, "=")
		for _, o := range ownedLong {
			if name == o {
				return fmt.Errorf("--%s is set by fedbayes submit itself", o)
			}
			if strings.HasPrefix(o, name) {
				return fmt.Errorf("--%s is an abbreviation of --%s, which fedbayes submit sets itself", name, o)
			}
		}
		return nil
	}
	for i := 1; i < len(w); i++ {
		if o, ok := ownedShort[w[i]]; ok {
			return fmt.Errorf("-%c is set by fedbayes submit itself (--%s, in %s)", w[i], o, w)
		}
		if strings.IndexByte(shortWithArgument, w[i]) >= 0 {
			break
		}
	}
	return nil
}
