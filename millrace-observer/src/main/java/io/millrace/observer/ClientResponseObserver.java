package io.millrace.observer;

/**
 * A response observer that is handed its call before it starts: to disable automatic inbound flow
 * control, to keep the call for cancelling it, or to set an on-ready handler for a channel's
 * requests.
 */
public interface ClientResponseObserver<ReqT, RespT> extends StreamObserver<RespT> {
  void beforeStart(ClientCallStreamObserver<ReqT> call);
}
