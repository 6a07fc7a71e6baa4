// Package fakeecr is an in-process fake of the Amazon ECR
// GetAuthorizationToken API for tests, in HyperShift's and in this module's.
//
// An *ECR holds the state of every region: how many calls it has had, the
// token it hands out and the failures it injects. It is reached in two ways.
// In process, ClientFactory (usable as a registryauth.ClientFactory) and
// Client return awsapi.ECRAPI values bound to one region; they record the
// FIPS and dual-stack variant the factory was asked for, so a test can
// assert which endpoint a registry host selected. Over HTTP, Handler speaks
// ECR's AWS JSON 1.1 protocol, so a real *ecr.Client, with its credential
// chain, signer, retryer and deserializer, can be pointed at an
// httptest.Server; the region is read from the request's SigV4 scope.
//
// By default every call returns a new token (ECR rotates passwords on every
// call): the password of the nth call of a region is Password(region, n),
// the authorization token is base64("AWS:"+password), it expires the token
// lifetime (12h, WithTokenLifetime) after the clock's now (WithClock), and
// proxyEndpoint names the registry of the client's account (the registry's
// own, else WithAccountID, else DefaultAccountID). SetToken pins a token.
//
// Failures are programmed per region: FailNext for the next n calls,
// SetError until cleared, SetLatency for slow endpoints (real time, honouring
// the caller's context) and Block for a deterministic gate that holds calls
// until released. ThrottlingError, AccessDeniedError, InvalidParameterError
// and EndpointError are the values the SDK produces for those failures, and
// the in-process client wraps injected errors in the same
// *smithy.OperationError and *awshttp.ResponseError layers as a real client
// without retries, so code that classifies SDK errors sees what it would see
// in production. Calls counts every call, failed and cancelled ones
// included; Requests returns what each call was.
//
// All methods are safe for concurrent use.
package fakeecr
