<?php
// GENERATED CODE -- DO NOT EDIT!

// Original file comments:
// The one contract of rpcbed. data.thrift and data.ice describe the same service;
// field numbers of DataType follow the published Go gRPC-vs-Thrift write-up.
namespace Rpcbed\Pb;

/**
 */
class DataClient extends \Grpc\BaseStub {

    /**
     * @param string $hostname hostname
     * @param array $opts channel options
     * @param \Grpc\Channel $channel (optional) re-use channel object
     */
    public function __construct($hostname, $opts, $channel = null) {
        parent::__construct($hostname, $opts, $channel);
    }

    /**
     * @param \Rpcbed\Pb\DataTypeRequest $argument input argument
     * @param array $metadata metadata
     * @param array $options call options
     * @return \Grpc\UnaryCall
     */
    public function DataType(\Rpcbed\Pb\DataTypeRequest $argument,
      $metadata = [], $options = []) {
        return $this->_simpleRequest('/rpcbed.data.Data/DataType',
        $argument,
        ['\Rpcbed\Pb\DataTypeResponse', 'decode'],
        $metadata, $options);
    }

    /**
     * @param \Rpcbed\Pb\DataListRequest $argument input argument
     * @param array $metadata metadata
     * @param array $options call options
     * @return \Grpc\UnaryCall
     */
    public function DataList(\Rpcbed\Pb\DataListRequest $argument,
      $metadata = [], $options = []) {
        return $this->_simpleRequest('/rpcbed.data.Data/DataList',
        $argument,
        ['\Rpcbed\Pb\DataListResponse', 'decode'],
        $metadata, $options);
    }

}
