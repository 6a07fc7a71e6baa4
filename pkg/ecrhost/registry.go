package ecrhost

// Registry describes one Amazon ECR registry host.
type Registry struct {
	// Host is the normalised (lower-case, no scheme, no port, no path)
	// registry host name, e.g. "123456789012.dkr.ecr.us-east-1.amazonaws.com".
	Host string
	// AccountID is the 12-digit AWS account that owns the registry; empty
	// for ECR Public.
	AccountID string
	// Region is the AWS region of the registry, e.g. "us-east-1". ECR
	// Public reports "us-east-1", the only region serving its API.
	Region string
	// Partition is one of "aws", "aws-cn", "aws-us-gov", "aws-iso",
	// "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc".
	Partition string
	// FIPS is true for FIPS registry hosts (dkr.ecr-fips, dkr-ecr-fips).
	FIPS bool
	// DualStack is true for IPv6-capable hosts (dkr-ecr..., ecr-public.aws.com).
	DualStack bool
	// Public is true for ECR Public (public.ecr.aws, ecr-public.aws.com).
	Public bool
}
