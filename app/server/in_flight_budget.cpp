#include "app/server/in_flight_budget.h"

#include "app/server/api_error.h"
#include "engine/core/error.h"

namespace sluice {

InFlightBudget::InFlightBudget(uint64_t max_units, std::string units, std::string option)
    : max_units_(max_units), units_(std::move(units)), option_(std::move(option)) {}

InFlightBudget::Reservation::Reservation(Reservation&& other) noexcept
    : budget_(std::move(other.budget_)), num_units_(other.num_units_) {
  other.num_units_ = 0;
}

InFlightBudget::Reservation& InFlightBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    reset();
    budget_ = std::move(other.budget_);
    num_units_ = other.num_units_;
    other.num_units_ = 0;
  }
  return *this;
}

void InFlightBudget::Reservation::grow(uint64_t num_units) {
  budget_->take(num_units);
  num_units_ += num_units;
}

void InFlightBudget::Reservation::reset() {
  if (budget_ && num_units_ > 0) budget_->give_back(num_units_);
  num_units_ = 0;
}

InFlightBudget::Reservation InFlightBudget::reserve(const std::shared_ptr<InFlightBudget>& budget,
                                                    uint64_t num_units) {
  Reservation reservation;
  reservation.budget_ = budget;
  reservation.grow(num_units);
  return reservation;
}

uint64_t InFlightBudget::num_reserved() const {
  const std::lock_guard lock(mutex_);
  return num_reserved_;
}

void InFlightBudget::take(uint64_t num_units) {
  const std::lock_guard lock(mutex_);
  if (num_units > max_units_ - num_reserved_)
    throw overloaded(str_cat("the requests in flight hold ", num_reserved_, " of the ", max_units_,
                             " ", units_, " this server keeps at once (", option_,
                             "), and this one needs ", num_units, " more; retry later"));
  num_reserved_ += num_units;
}

void InFlightBudget::give_back(uint64_t num_units) {
  const std::lock_guard lock(mutex_);
  num_reserved_ -= num_units;
}

}  // namespace sluice
