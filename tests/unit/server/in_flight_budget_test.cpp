// The memory that requests in flight share (in_flight_budget.h): reservations add up, one past
// the budget is a 503 that holds nothing, and what a request held comes back when it ends.
#include "app/server/in_flight_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/server/api_error.h"

namespace sluice {
namespace {

TEST(InFlightBudget, ReservationsShareTheBudgetUntilTheyEnd) {
  auto budget = std::make_shared<InFlightBudget>(1000, "widgets", "--max-widgets");
  InFlightBudget::Reservation a = InFlightBudget::reserve(budget, 600);
  EXPECT_EQ(budget->num_reserved(), 600u);
  try {
    InFlightBudget::reserve(budget, 401);
    FAIL() << "reserved past the budget";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_EQ(e.code(), "overloaded");
    EXPECT_THAT(e.what(), ::testing::HasSubstr("600 of the 1000 widgets"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--max-widgets"));
  }
  EXPECT_EQ(budget->num_reserved(), 600u);  // the refused one holds nothing
  InFlightBudget::Reservation b = InFlightBudget::reserve(budget, 100);
  b.grow(300);
  EXPECT_EQ(b.num_units(), 400u);
  EXPECT_THROW(b.grow(1), ApiError);
  EXPECT_EQ(b.num_units(), 400u);
  InFlightBudget::Reservation moved = std::move(b);
  EXPECT_EQ(budget->num_reserved(), 1000u);  // moving keeps it held
  moved.reset();
  EXPECT_EQ(budget->num_reserved(), 600u);
  {
    InFlightBudget::Reservation scoped = InFlightBudget::reserve(budget, 400);
    EXPECT_EQ(budget->num_reserved(), 1000u);
  }
  EXPECT_EQ(budget->num_reserved(), 600u);  // given back when destroyed
  a = InFlightBudget::Reservation();
  EXPECT_EQ(budget->num_reserved(), 0u);
  EXPECT_NO_THROW(InFlightBudget::reserve(budget, 1000));
}

}  // namespace
}  // namespace sluice
