package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/rpcbed/rpcbed/internal/service"
)

// DataListQuery parses the query of GET /v1/datalist.
func DataListQuery(rawQuery string) (int, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return 0, fmt.Errorf("bad query: %v", err)
	}
	v := q.Get("n")
	if v == "" {
		return 0, errors.New("missing n")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("n = %q: not an integer", v)
	}
	return n, nil // the range is the core's to check, as for every protocol
}

// DataTypeQuery parses the query of GET /v1/datatype.
func DataTypeQuery(rawQuery string) (groupName, enName string, err error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", fmt.Errorf("bad query: %v", err)
	}
	return q.Get("groupName"), q.Get("enName"), nil // required-ness is the core's to check
}

// serverName is what ab and the clients print as "Server Software".
var serverName = []string{"rpcbed-go-server"}

type httpData struct {
	svc     *service.Service
	answers *answers
	bufs    sync.Pool
}

func newHTTPData(svc *service.Service, a *answers) *httpData {
	return &httpData{svc: svc, answers: a, bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

func httpAuth(r *http.Request) service.Auth {
	return service.Auth{ClientID: r.Header.Get("X-Client-Id"), Token: r.Header.Get("X-Token")}
}

var httpStatus = map[service.Code]int{
	service.InvalidArgument:  http.StatusBadRequest,
	service.Unauthenticated:  http.StatusUnauthorized,
	service.DeadlineExceeded: http.StatusGatewayTimeout,
	service.Unavailable:      http.StatusServiceUnavailable,
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(service.ErrorBody{Code: status, Message: msg})
	w.Header()["Server"] = serverName
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeServiceError(w http.ResponseWriter, err error) {
	status, ok := httpStatus[service.CodeOf(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeError(w, status, err.Error())
}

// writeJSON encodes v into a buffer of est bytes (an upper bound of its size:
// it never grows) and writes it. A connection's write that makes no progress
// for StallTimeout is cut (stallConn).
func (h *httpData) writeJSON(w http.ResponseWriter, token string, v any, est int64) {
	buf := h.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer h.bufs.Put(buf)
	buf.Grow(int(est))
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	hd := w.Header()
	hd["Server"] = serverName
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	hd.Set("X-Token", token)
	writeChunked(w, buf.Bytes())
}

func (h *httpData) dataType(w http.ResponseWriter, r *http.Request) {
	group, en, err := DataTypeQuery(r.URL.RawQuery)
	if err != nil {
		h.svc.Stats.Record(service.HTTP, service.CallDataType, err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := h.svc.DataType(r.Context(), service.HTTP, httpAuth(r), group, en)
	if err != nil {
		writeServiceError(w, err)
		return
	}
	h.writeJSON(w, res.Token, &service.DataTypeBody{Message: "ok", Auth: service.TokenBody{Token: res.Token}, CodeID: res.CodeID, CnName: res.CnName}, answerOverhead)
}

func (h *httpData) dataList(w http.ResponseWriter, r *http.Request) {
	n, err := DataListQuery(r.URL.RawQuery)
	if err != nil {
		h.svc.Stats.Record(service.HTTP, service.CallDataList, err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	tok, items, err := h.svc.DataList(r.Context(), service.HTTP, httpAuth(r), n)
	if err != nil {
		writeServiceError(w, err)
		return
	}
	// The answer's bytes are reserved before it is built, and held until written.
	est := answerEstimate(len(items), itemJSON)
	release, err := h.answers.reserve(r.Context(), nil, jsonCopies*est)
	if err != nil {
		writeServiceError(w, budgetErr(err))
		return
	}
	defer release()
	h.writeJSON(w, tok, &service.DataListBody{Message: "ok", Auth: service.TokenBody{Token: tok}, N: n, Items: items}, est)
}
