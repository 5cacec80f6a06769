// Package constrained declares the same name in two build-constrained files.
package constrained
