// What a client is lent to run its requests (ModelHost::lend_for_job): one RequestService, whether
// its tokens come from this machine or from remote servers, kept alive while the lease is held.
#pragma once

#include <memory>
#include <string>

#include "engine/model_session.h"
#include "engine/service/request_service.h"

namespace sluice {

struct ServiceLease {
  // Runs the requests: the loaded model's engine service, or a RemoteDriver.
  std::shared_ptr<RequestService> service;
  // The model the service runs, whose tokenizer and chat template turn rows into token ids; null
  // when the service takes text (remote servers apply their own).
  std::shared_ptr<const ModelSession> session;
  // The model a text-taking service runs, as it names it (a remote job's file records it); "" for
  // a local model.
  std::string model_name;
};

}  // namespace sluice
