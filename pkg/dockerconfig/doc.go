// Package dockerconfig parses, edits, merges and writes pull secrets.
package dockerconfig
