// Package testfiles declares globals in its test files.
package testfiles
