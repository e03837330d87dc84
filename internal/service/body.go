package service

// The JSON documents of the HTTP/JSON protocol (docs/contract.md): what go-server's
// HTTP adapter writes and every Go client or front of it reads.

// DataListBody is the JSON document of GET /v1/datalist (docs/contract.md).
type DataListBody struct {
	Code    int       `json:"code"`
	Message string    `json:"message"`
	Auth    TokenBody `json:"auth"`
	N       int       `json:"n"`
	Items   []Item    `json:"items"`
}

// DataTypeBody is the JSON document of GET /v1/datatype.
type DataTypeBody struct {
	Code    int       `json:"code"`
	Message string    `json:"message"`
	Auth    TokenBody `json:"auth"`
	CodeID  int64     `json:"codeId"`
	CnName  string    `json:"cnName"`
}

// TokenBody carries the refreshed token in a JSON body.
type TokenBody struct {
	Token string `json:"token"`
}

// ErrorBody is every HTTP error's JSON document.
type ErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}
