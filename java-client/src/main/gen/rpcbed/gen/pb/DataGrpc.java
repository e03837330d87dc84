package rpcbed.gen.pb;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: data.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class DataGrpc {

  private DataGrpc() {}

  public static final String SERVICE_NAME = "rpcbed.data.Data";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<rpcbed.gen.pb.DataTypeRequest,
      rpcbed.gen.pb.DataTypeResponse> getDataTypeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DataType",
      requestType = rpcbed.gen.pb.DataTypeRequest.class,
      responseType = rpcbed.gen.pb.DataTypeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<rpcbed.gen.pb.DataTypeRequest,
      rpcbed.gen.pb.DataTypeResponse> getDataTypeMethod() {
    io.grpc.MethodDescriptor<rpcbed.gen.pb.DataTypeRequest, rpcbed.gen.pb.DataTypeResponse> getDataTypeMethod;
    if ((getDataTypeMethod = DataGrpc.getDataTypeMethod) == null) {
      synchronized (DataGrpc.class) {
        if ((getDataTypeMethod = DataGrpc.getDataTypeMethod) == null) {
          DataGrpc.getDataTypeMethod = getDataTypeMethod =
              io.grpc.MethodDescriptor.<rpcbed.gen.pb.DataTypeRequest, rpcbed.gen.pb.DataTypeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DataType"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  rpcbed.gen.pb.DataTypeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  rpcbed.gen.pb.DataTypeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new DataMethodDescriptorSupplier("DataType"))
              .build();
        }
      }
    }
    return getDataTypeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<rpcbed.gen.pb.DataListRequest,
      rpcbed.gen.pb.DataListResponse> getDataListMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DataList",
      requestType = rpcbed.gen.pb.DataListRequest.class,
      responseType = rpcbed.gen.pb.DataListResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<rpcbed.gen.pb.DataListRequest,
      rpcbed.gen.pb.DataListResponse> getDataListMethod() {
    io.grpc.MethodDescriptor<rpcbed.gen.pb.DataListRequest, rpcbed.gen.pb.DataListResponse> getDataListMethod;
    if ((getDataListMethod = DataGrpc.getDataListMethod) == null) {
      synchronized (DataGrpc.class) {
        if ((getDataListMethod = DataGrpc.getDataListMethod) == null) {
          DataGrpc.getDataListMethod = getDataListMethod =
              io.grpc.MethodDescriptor.<rpcbed.gen.pb.DataListRequest, rpcbed.gen.pb.DataListResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DataList"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  rpcbed.gen.pb.DataListRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  rpcbed.gen.pb.DataListResponse.getDefaultInstance()))
              .setSchemaDescriptor(new DataMethodDescriptorSupplier("DataList"))
              .build();
        }
      }
    }
    return getDataListMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static DataStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<DataStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<DataStub>() {
        @java.lang.Override
        public DataStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new DataStub(channel, callOptions);
        }
      };
    return DataStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static DataBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<DataBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<DataBlockingStub>() {
        @java.lang.Override
        public DataBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new DataBlockingStub(channel, callOptions);
        }
      };
    return DataBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static DataFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<DataFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<DataFutureStub>() {
        @java.lang.Override
        public DataFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new DataFutureStub(channel, callOptions);
        }
      };
    return DataFutureStub.newStub(factory, channel);
  }

  /**
   */
  public static abstract class DataImplBase implements io.grpc.BindableService {

    /**
     */
    public void dataType(rpcbed.gen.pb.DataTypeRequest request,
        io.grpc.stub.StreamObserver<rpcbed.gen.pb.DataTypeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDataTypeMethod(), responseObserver);
    }

    /**
     */
    public void dataList(rpcbed.gen.pb.DataListRequest request,
        io.grpc.stub.StreamObserver<rpcbed.gen.pb.DataListResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDataListMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getDataTypeMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                rpcbed.gen.pb.DataTypeRequest,
                rpcbed.gen.pb.DataTypeResponse>(
                  this, METHODID_DATA_TYPE)))
          .addMethod(
            getDataListMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                rpcbed.gen.pb.DataListRequest,
                rpcbed.gen.pb.DataListResponse>(
                  this, METHODID_DATA_LIST)))
          .build();
    }
  }

  /**
   */
  public static final class DataStub extends io.grpc.stub.AbstractAsyncStub<DataStub> {
    private DataStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected DataStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new DataStub(channel, callOptions);
    }

    /**
     */
    public void dataType(rpcbed.gen.pb.DataTypeRequest request,
        io.grpc.stub.StreamObserver<rpcbed.gen.pb.DataTypeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDataTypeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void dataList(rpcbed.gen.pb.DataListRequest request,
        io.grpc.stub.StreamObserver<rpcbed.gen.pb.DataListResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDataListMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   */
  public static final class DataBlockingStub extends io.grpc.stub.AbstractBlockingStub<DataBlockingStub> {
    private DataBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected DataBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new DataBlockingStub(channel, callOptions);
    }

    /**
     */
    public rpcbed.gen.pb.DataTypeResponse dataType(rpcbed.gen.pb.DataTypeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDataTypeMethod(), getCallOptions(), request);
    }

    /**
     */
    public rpcbed.gen.pb.DataListResponse dataList(rpcbed.gen.pb.DataListRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDataListMethod(), getCallOptions(), request);
    }
  }

  /**
   */
  public static final class DataFutureStub extends io.grpc.stub.AbstractFutureStub<DataFutureStub> {
    private DataFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected DataFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new DataFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<rpcbed.gen.pb.DataTypeResponse> dataType(
        rpcbed.gen.pb.DataTypeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDataTypeMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<rpcbed.gen.pb.DataListResponse> dataList(
        rpcbed.gen.pb.DataListRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDataListMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_DATA_TYPE = 0;
  private static final int METHODID_DATA_LIST = 1;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final DataImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(DataImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_DATA_TYPE:
          serviceImpl.dataType((rpcbed.gen.pb.DataTypeRequest) request,
              (io.grpc.stub.StreamObserver<rpcbed.gen.pb.DataTypeResponse>) responseObserver);
          break;
        case METHODID_DATA_LIST:
          serviceImpl.dataList((rpcbed.gen.pb.DataListRequest) request,
              (io.grpc.stub.StreamObserver<rpcbed.gen.pb.DataListResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  private static abstract class DataBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    DataBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return rpcbed.gen.pb.DataOuterClass.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("Data");
    }
  }

  private static final class DataFileDescriptorSupplier
      extends DataBaseDescriptorSupplier {
    DataFileDescriptorSupplier() {}
  }

  private static final class DataMethodDescriptorSupplier
      extends DataBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    DataMethodDescriptorSupplier(String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (DataGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new DataFileDescriptorSupplier())
              .addMethod(getDataTypeMethod())
              .addMethod(getDataListMethod())
              .build();
        }
      }
    }
    return result;
  }
}
