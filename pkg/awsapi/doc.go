// Package awsapi holds the narrow AWS service interfaces this module calls,
// one interface per service, with method signatures copied from the AWS SDK
// for Go v2 so that the real client satisfies them unchanged.
//
// The interfaces live in their own dependency-free package so that fakes
// (see testing/fakeecr) and the packages that consume them (registryauth)
// can both import them without an import cycle.
package awsapi
