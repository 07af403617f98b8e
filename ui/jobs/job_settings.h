// What a job was asked for, as the Jobs tab tells jobs apart: its n, temperature, max tokens,
// structured-output mode and, for a remote job, the model its servers serve. Read from the spec
// kept in the job's info (JobInfo::params, already in memory once the job is listed), so it opens
// no table.
#pragma once

#include <QString>

#include "engine/jobs/job_info.h"

namespace sluice::ui {

struct JobSettings {
  bool isKnown = false;  // false when the job's params do not read as a spec: the rest is empty
  int numSamples = 0;    // n: samples per prompt
  double temperature = 0.0;
  int maxTokens = 0;
  // "free text", "JSON schema", "JSON", "regex", "choice", "grammar", "schema per row", or
  // "per line" for an OpenAI Batch input whose lines carry their own.
  QString outputMode;
  bool isRemote = false;
  QString modelName;  // a remote job's model as its servers named it; "" for a local job
  QString endpoints;  // a remote job's servers, comma-separated
};

// Returns the settings info's spec holds; isKnown false when it does not read as one.
JobSettings jobSettingsOf(const sluice::JobInfo& info);

}  // namespace sluice::ui
