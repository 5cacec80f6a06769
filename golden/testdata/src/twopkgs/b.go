// Package b is the second package in the directory.
package b
