// Package layout holds no code: its test checks docs/design.md's package table against the
// packages of the module, so that the map a reader starts from says what the code imports.
package layout
