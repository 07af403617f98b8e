// An amount of memory that the requests in flight share: request bodies being read and parsed,
// answers being built. A request reserves what it may hold before it holds it, and gives it back
// when it is done; a reservation that would pass the budget is a 503 (overloaded), which OpenAI
// clients retry. So the server's memory has a ceiling however many clients ask at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace sluice {

class InFlightBudget {
 public:
  // units: what is counted ("bytes of request bodies"); option: the command-line option that
  // sets max_units. Both go into the 503's message.
  InFlightBudget(uint64_t max_units, std::string units, std::string option);

  // Units held by one request until destroyed (or reset).
  class Reservation {
   public:
    Reservation() = default;
    ~Reservation() { reset(); }
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;

    // Holds num_units more. Throws ApiError 503 (and holds no more) when that would pass the
    // budget. Precondition: made by reserve().
    void grow(uint64_t num_units);
    // Gives everything back.
    void reset();
    uint64_t num_units() const { return num_units_; }

   private:
    friend class InFlightBudget;
    std::shared_ptr<InFlightBudget> budget_;  // null: an empty reservation
    uint64_t num_units_ = 0;
  };

  // Returns a reservation of num_units. Throws ApiError 503 when the requests in flight hold so
  // many that these would pass the budget.
  static Reservation reserve(const std::shared_ptr<InFlightBudget>& budget, uint64_t num_units);
  uint64_t num_reserved() const;
  uint64_t max_units() const { return max_units_; }

 private:
  void take(uint64_t num_units);  // throws ApiError 503
  void give_back(uint64_t num_units);

  const uint64_t max_units_;
  const std::string units_;
  const std::string option_;
  mutable std::mutex mutex_;
  uint64_t num_reserved_ = 0;
};

}  // namespace sluice
