package fakeecr

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const (
	targetPrefix = "AmazonEC2ContainerRegistry_V20150921."
	jsonType     = "application/x-amz-json-1.1"
)

// Handler serves the fake over ECR's wire protocol (AWS JSON 1.1) so that a
// real *ecr.Client can call it: point the SDK at an httptest.Server running
// it with BaseEndpoint (or AWS_ENDPOINT_URL_ECR) and static credentials.
//
// Only GetAuthorizationToken is implemented; other targets get 400
// UnknownOperationException. The region is the one in the SigV4 credential
// scope of the Authorization header; the signature is not checked.
// Injected API errors are sent as ECR sends them (400, or 500 for server
// faults, with {"__type","message"}); an injected network error (one that
// wraps *smithyhttp.RequestSendError or *net.OpError, like EndpointError)
// drops the connection; any other injected error is a 500 ServerException.
func (e *ECR) Handler() http.Handler { return http.HandlerFunc(e.serveHTTP) }

func (e *ECR) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		writeError(w, http.StatusNotFound, "", "UnknownOperationException", "only POST / is served")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != jsonType {
		writeError(w, http.StatusBadRequest, "", "SerializationException", "Content-Type must be "+jsonType)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); target != targetPrefix+"GetAuthorizationToken" {
		writeError(w, http.StatusBadRequest, "", "UnknownOperationException", "unknown operation "+strconv.Quote(target))
		return
	}
	akid, region, ok := credentialScope(r.Header.Get("Authorization"))
	if !ok {
		writeError(w, http.StatusBadRequest, "", "MissingAuthenticationTokenException", "Missing Authentication Token")
		return
	}
	var in struct {
		RegistryIDs []string `json:"registryIds"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil && len(body) > 0 {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "SerializationException", "cannot decode request body")
		return
	}

	req := Request{Region: region, AccessKeyID: akid, RegistryIDs: in.RegistryIDs}
	var forced error
	if e.requiredAKID != "" && akid != e.requiredAKID {
		// A call signed by another identity reaches ECR and fails there.
		forced = &smithy.GenericAPIError{Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}
	}
	tok, err := e.serve(r.Context(), req, e.accountID, forced)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client is gone
		}
		var apiErr smithy.APIError
		var sendErr *smithyhttp.RequestSendError
		var opErr *net.OpError
		switch {
		case errors.As(err, &apiErr):
			status := http.StatusBadRequest
			if apiErr.ErrorFault() == smithy.FaultServer {
				status = http.StatusInternalServerError
			}
			writeError(w, status, tok.requestID, apiErr.ErrorCode(), apiErr.ErrorMessage())
		case errors.As(err, &sendErr), errors.As(err, &opErr):
			dropConnection(w)
		default:
			writeError(w, http.StatusInternalServerError, tok.requestID, "ServerException", err.Error())
		}
		return
	}

	type authData struct {
		AuthorizationToken string      `json:"authorizationToken"`
		ExpiresAt          json.Number `json:"expiresAt"`
		ProxyEndpoint      string      `json:"proxyEndpoint"`
	}
	out := struct {
		AuthorizationData []authData `json:"authorizationData"`
	}{[]authData{{
		AuthorizationToken: base64.StdEncoding.EncodeToString([]byte("AWS:" + tok.password)),
		// ECR sends epoch seconds with a fraction.
		ExpiresAt:     json.Number(strconv.FormatFloat(float64(tok.expiresAt.UnixMilli())/1000, 'f', 3, 64)),
		ProxyEndpoint: tok.proxyEndpoint,
	}}}
	w.Header().Set("Content-Type", jsonType)
	w.Header().Set("X-Amzn-Requestid", tok.requestID)
	_ = json.NewEncoder(w).Encode(out)
}

// credentialScope extracts the access key id and region from a SigV4
// Authorization header:
// "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ecr/aws4_request, ...".
func credentialScope(h string) (akid, region string, ok bool) {
	_, rest, found := strings.Cut(h, "Credential=")
	if !found {
		return "", "", false
	}
	scope, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(strings.TrimSpace(scope), "/")
	if len(parts) != 5 || parts[0] == "" || parts[2] == "" || parts[3] != "ecr" || parts[4] != "aws4_request" {
		return "", "", false
	}
	return parts[0], parts[2], true
}

func writeError(w http.ResponseWriter, status int, requestID, code, msg string) {
	w.Header().Set("Content-Type", jsonType)
	w.Header().Set("X-Amzn-Requestid", requestID)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// dropConnection closes the TCP connection without an answer, which the
// SDK reports as a *smithyhttp.RequestSendError, like an unreachable
// endpoint. Without a hijackable connection (HTTP/2) it aborts the handler.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
