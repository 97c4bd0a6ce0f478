package data

import (
	"fmt"

	"fedbayes.dev/fedbayes/runinfo"
)

// DataMemoryFactor is the memory a run holds per byte of a dataset file's raw values: the bytes
// read, their float32 values (4 bytes each), the training/test and subsample copies, the partition
// and the clients' copies. 15 is what a run took on IDX files (a 784 MB file of 1M images: 11.3
// GB). Loaders refuse a file whose raw values exceed MaxDataMemory / DataMemoryFactor bytes.
const DataMemoryFactor = 15

// TableMemoryFactor is the memory the table readers (LoadCSV, LoadSklearn) take per byte of a
// table's content: a bound on what they allocate per byte on their worst cases (one value a line
// for readRows, two for LoadCSV, numbers or one-letter classes), measured by TestTableMemoryFactor
// and TestLoadCSVRowCountPrecheck as runtime.MemStats.TotalAlloc (readRows 6.0 raw and 9.0 gzip,
// LoadCSV 3.5 raw and 6.5 gzip, at most 10.2 on the hostile tables), with room; the dataset a table
// becomes holds at most 2 bytes of values per byte of text (a float32 for "0,"), well within it.
// A table whose content exceeds MaxDataMemory / TableMemoryFactor bytes is refused.
const TableMemoryFactor = 20

// MaxDataMemory bounds the memory that the raw values of one dataset file may take once loaded
// (DataMemoryFactor times their bytes: as an IDX header or a MAT variable declares them, a CIFAR
// file's size, a table's content): a file with more is refused, naming it, before more than
// MaxDataMemory / DataMemoryFactor bytes of it are read or decompressed. 0 (the default) means the
// memory the process may use (runinfo.MemoryLimit: its cgroup's limit, RLIMIT_AS or Slurm's
// SLURM_MEM_PER_NODE where one is set, else the machine's memory), or DefaultMaxDataMemory where it
// is unknown.
var MaxDataMemory int64

// DefaultMaxDataMemory is MaxDataMemory's bound on a machine whose memory is unknown: 16 GiB.
const DefaultMaxDataMemory int64 = 16 << 30

// dataMemoryBound returns the bound in bytes and where it comes from, for the messages.
func dataMemoryBound() (int64, string) {
	if MaxDataMemory > 0 {
		return MaxDataMemory, "data.MaxDataMemory"
	}
	if m, from := runinfo.MemoryLimit(); m > 0 {
		return m, from
	}
	return DefaultMaxDataMemory, "the default bound, this process's memory being unknown"
}

// checkDataMemory refuses a file whose declared raw values (what: e.g. "IDX dimensions [8000000 28
// 28]", raw bytes) would take more memory once loaded than the bound allows; a negative size is
// refused too.
func checkDataMemory(path, what string, raw int64) error {
	bound, from := dataMemoryBound()
	if raw < 0 {
		return fileErrorf(path, "%s declare a negative size (%d bytes)", what, raw)
	}
	if raw <= bound/DataMemoryFactor {
		return nil
	}
	return fileErrorf(path, "%s declare %s of values, which would take about %s of memory once loaded (%dx the raw bytes), more than %s (%s); "+
		"use a smaller file (the data is not read)", what, byteSize(raw), byteSize(sat(raw, DataMemoryFactor)), DataMemoryFactor, byteSize(bound), from)
}

// sat returns a*b, saturated at the largest int64.
func sat(a, b int64) int64 {
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}

// byteSize formats n bytes in binary units, e.g. "6.3 GiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	for v >= unit && u < 5 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[u-1])
}
