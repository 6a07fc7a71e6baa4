package registryauth

import (
	"context"
	"errors"
	"net"
	"strings"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// classify maps a GetAuthorizationToken failure to one sentinel, a metric
// outcome and an operator hint. The SDK error itself stays as the cause:
// its text names the principal and request id, never a token.
func classify(err error, reg ecrhost.Registry) (kind error, outcome, hint string) {
	// Credential-chain failures come first: an STS or IMDS error inside
	// them is about the identity, not about ECR.
	if isCredentialsError(err) {
		return ErrNoAWSCredentials, "no_credentials",
			"no usable AWS identity: configure IRSA (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE), EKS Pod Identity, or an EC2 instance role (IMDSv2 hop limit >= 2 inside pods)"
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "AccessDeniedException", "AccessDenied", "UnauthorizedOperation":
			return ErrAccessDenied, "access_denied",
				`allow "ecr:GetAuthorizationToken" on Resource "*" for this identity (and the ECR read actions on the repositories)`
		case "UnrecognizedClientException", "InvalidClientTokenId", "InvalidSignatureException", "ExpiredTokenException", "ExpiredToken":
			return ErrNoAWSCredentials, "no_credentials",
				"the AWS credentials were rejected: check the identity (IRSA role, Pod Identity association, instance role) and the clock"
		case "ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded", "Throttling":
			return ErrThrottled, "throttled",
				"GetAuthorizationToken is limited to 500 requests/s per account and region; retried with backoff"
		}
	}
	var sendErr *smithyhttp.RequestSendError
	var netErr net.Error
	if errors.As(err, &sendErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
		return ErrEndpointUnreachable, "endpoint_unreachable", vpcEndpointHint(reg)
	}
	return ErrTokenFetch, "error", ""
}

// isCredentialsError recognises a failure to obtain credentials. The SDK
// has no type for it in the generated clients, only the stable wrapping
// texts of its identity-resolution and signing middleware.
func isCredentialsError(err error) bool {
	var signErr *v4.SigningError
	if errors.As(err, &signErr) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "get identity: ") ||
		strings.Contains(msg, "failed to retrieve credentials") ||
		strings.Contains(msg, "failed to refresh cached credentials")
}

// vpcEndpointHint names the interface endpoints a private VPC needs to
// reach ECR in the registry's region.
func vpcEndpointHint(reg ecrhost.Registry) string {
	prefix := "com.amazonaws."
	if reg.Partition == "aws-cn" {
		prefix = "cn.com.amazonaws."
	}
	return "in a private VPC create the interface endpoints " + prefix + reg.Region + ".ecr.api and " +
		prefix + reg.Region + ".ecr.dkr (private DNS) and an S3 gateway endpoint, or set AWS_ENDPOINT_URL_ECR"
}
