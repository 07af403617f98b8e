// What a failed HTTP exchange (cpp-httplib's Error) means, in words a user can act on:
// httplib's own names ("Connection", "Read") read like a message cut off mid-sentence.
#pragma once

#include <httplib.h>

#include <string>

namespace sluice {

// Returns a short phrase for error, e.g. "could not connect (refused, or no server there)"; an
// unknown code is named by its number.
std::string http_error_text(httplib::Error error);

}  // namespace sluice
