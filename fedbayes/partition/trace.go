package partition

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MaxTraceLine bounds the length of one line of a trace file (a round of 100,000 clients with ids
// of up to 6 digits and a separator fits).
const MaxTraceLine = 1 << 20

// ReadTrace reads an availability trace (SamplingOptions.Trace) from text: line r lists the clients
// available in round r, their ids separated by commas and/or spaces; a line whose first non-blank
// character is '#' is a comment and is not a round. An empty line is an empty round and an error, as
// is an id that is not a non-negative integer; the bounds against the clients are NewSampler's. An
// error names the line.
func ReadTrace(r io.Reader) ([][]int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxTraceLine)
	var trace [][]int
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.FieldsFunc(text, func(c rune) bool { return c == ',' || c == ' ' || c == '\t' })
		if len(fields) == 0 {
			return nil, fmt.Errorf("partition: trace: line %d (round %d) lists no clients", line, len(trace)+1)
		}
		ids := make([]int, len(fields))
		for i, f := range fields {
			k, err := strconv.Atoi(f)
			if err != nil || k < 0 {
				return nil, fmt.Errorf("partition: trace: line %d (round %d): %q is not a client id (a non-negative integer)", line, len(trace)+1, f)
			}
			ids[i] = k
		}
		trace = append(trace, ids)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("partition: trace: after line %d: %w", line, err)
	}
	if len(trace) == 0 {
		return nil, fmt.Errorf("partition: trace: no rounds")
	}
	return trace, nil
}

// ReadTraceFile is ReadTrace of the file at path; its errors name the file.
func ReadTraceFile(path string) ([][]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("partition: trace: %w", err)
	}
	defer f.Close()
	trace, err := ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trace, nil
}
