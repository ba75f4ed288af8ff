// Package outcomes has no API. Its tests check [github.com/mcs-go/mcs.CodeOf]
// over every error and result constructor of the module, in one table, so that a
// new error of a driver or a middleware cannot be reported with the wrong code.
package outcomes
