package cluster

import (
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

// owned are the sbatch options the script sets itself; Extra may not set them.
var owned = []string{"--array", "-a", "--output", "-o", "--error", "-e", "--job-name", "-J", "--parsable", "--wrap"}

// Validate checks every option and names the first that is wrong.
func (r Resources) Validate() error {
	if r.Partition != "" && !partitionRe.MatchString(r.Partition) {
		return fmt.Errorf("cluster: -partition %q: not a partition name (letters, digits, '_', '-', '.', comma-separated)", r.Partition)
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

// extraOption returns the sbatch option of an extra line, without the #SBATCH prefix.
func extraOption(line string) (string, error) {
	if strings.ContainsAny(line, "\n\r\x00") {
		return "", fmt.Errorf("must be one line")
	}
	opt := strings.TrimSpace(line)
	opt = strings.TrimSpace(strings.TrimPrefix(opt, "#SBATCH"))
	if !strings.HasPrefix(opt, "-") {
		return "", fmt.Errorf("not an sbatch option (it must start with '-', e.g. --gres=gpu:1)")
	}
	name := opt
	if i := strings.IndexAny(name, "= "); i >= 0 {
		name = name[:i]
	}
	for _, o := range owned {
		if name == o || (len(o) == 2 && strings.HasPrefix(name, o) && !strings.HasPrefix(name, "--")) {
			return "", fmt.Errorf("%s is set by fedbayes submit itself", o)
		}
	}
	return opt, nil
}
