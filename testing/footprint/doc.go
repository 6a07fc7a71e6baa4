// Package footprint holds no code, only a test: it guards the modules that
// HyperShift vendors along with each group of this module's packages. A new
// module in a group's import graph fails the test until it is added to that
// group's list on purpose, and the keychain path must stay free of registry
// clients, metrics libraries and HyperShift's main module.
package footprint
