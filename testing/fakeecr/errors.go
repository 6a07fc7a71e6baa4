package fakeecr

import (
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The ready-made errors below are the values the SDK's ECR deserializer
// builds from the wire. Codes ECR does not model for GetAuthorizationToken
// become a *smithy.GenericAPIError with no Fault (the deserializer sets
// none); modeled ones (InvalidParameterException, ServerException) become
// their types.* value. Pass them to FailNext or SetError; the fake wraps
// them in *smithy.OperationError and *awshttp.ResponseError as the SDK does.

// ThrottlingError is ECR's answer above the request quota.
func ThrottlingError() error {
	return &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
}

// AccessDeniedError is IAM's answer when the identity lacks
// ecr:GetAuthorizationToken.
func AccessDeniedError() error {
	return &smithy.GenericAPIError{
		Code: "AccessDeniedException",
		Message: "User: arn:aws:sts::" + DefaultAccountID + ":assumed-role/worker/i-0123456789abcdef0 " +
			"is not authorized to perform: ecr:GetAuthorizationToken on resource: * " +
			"because no identity-based policy allows the ecr:GetAuthorizationToken action",
	}
}

// InvalidParameterError is ECR's modeled InvalidParameterException.
func InvalidParameterError() error {
	return &types.InvalidParameterException{
		Message: aws.String("Invalid parameter at 'registryIds' failed to satisfy constraint: 'Member must satisfy constraint: [Member must satisfy regular expression pattern: [0-9]{12}]'"),
	}
}

// EndpointError looks like the SDK failing to reach the API endpoint (a
// missing VPC endpoint, a firewall): a *smithyhttp.RequestSendError around
// the *url.Error and *net.OpError net/http returns for a refused dial.
// Handler answers it by dropping the connection, so a real SDK sees a real
// network failure.
func EndpointError() error {
	return &smithyhttp.RequestSendError{Err: &url.Error{
		Op:  "Post",
		URL: "https://api.ecr.us-east-1.amazonaws.com/",
		Err: &net.OpError{
			Op:   "dial",
			Net:  "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 443},
			Err:  &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED},
		},
	}}
}
