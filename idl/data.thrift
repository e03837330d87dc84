// The one contract of rpcbed (see data.proto). DataType's fields are all required,
// ids 1, 2, 3 in the published order.
namespace go thriftgen
namespace java rpcbed.gen.thrift
namespace php Rpcbed.Thrift

struct Auth {
  1: required string clientId,
  2: required string token,
}

struct AuthReply {
  1: required string token,
}

struct DataTypeRequest {
  1: required Auth auth,
  2: required string groupName,
  3: required string enName,
}

struct DataTypeResponse {
  1: required AuthReply auth,
  2: required i64 codeId,
  3: required string cnName,
}

struct DataListRequest {
  1: required Auth auth,
  2: required i32 n,
}

struct Item {
  1: required i64 id,
  2: required string name,
  3: required i64 createdAt,
  4: required double score,
  5: required bool enabled,
  6: required i64 parentId,
  7: required string note,
  8: required list<string> tags,
}

struct DataListResponse {
  1: required AuthReply auth,
  2: required list<Item> items,
}

// Code mirrors the gRPC status codes the server uses (3 invalid argument,
// 16 unauthenticated, 13 internal).
exception DataError {
  1: required i32 code,
  2: required string message,
}

service Data {
  DataTypeResponse DataType(1: DataTypeRequest req) throws (1: DataError err),
  DataListResponse DataList(1: DataListRequest req) throws (1: DataError err),
}
