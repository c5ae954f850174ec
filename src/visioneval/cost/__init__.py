"""What a run costs in money: prices per model, the tokens each request used (or the cost the
provider reported), a dry run's estimate before anything is sent, and the --max-cost stop."""
