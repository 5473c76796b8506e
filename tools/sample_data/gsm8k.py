"""Eval: GSM8K-style word problems, several steps each, "#### N" on the last line."""

from sample_data.common import norm, num, rng_for
from sample_data.math_answers import NAMES


def gsm_item(rng):
    """One multi-step problem as (question, solution lines, integer answer); a draw whose numbers
    would not divide evenly is redrawn, so every answer is a whole number."""
    name = rng.choice(NAMES)
    kind = rng.randrange(16)
    if kind == 0:
        batches, per, sold, price, cheap = rng.randint(3, 8), rng.choice([12, 18, 24]), 0, rng.choice([2, 3, 4]), 1
        total = batches * per
        sold = total - rng.randint(5, 15)
        left = total - sold
        rev = sold * price + left * cheap
        q = (
            f"A bakery makes {batches} batches of {per} muffins. It sells {sold} muffins at ${price} each and sells the rest "
            f"at the end of the day for ${cheap} each. How much money does the bakery make from the muffins?"
        )
        return (
            q,
            [
                f"The bakery makes {batches} × {per} = {total} muffins.",
                f"Full-price sales bring in {sold} × ${price} = ${num(sold * price)}.",
                f"There are {total} − {sold} = {left} muffins left, which bring in {left} × ${cheap} = ${left * cheap}.",
                f"In total the bakery makes ${num(sold * price)} + ${left * cheap} = ${num(rev)}.",
            ],
            rev,
        )
    if kind == 1:
        adults, kids, pa, pk, cost = (
            rng.randint(40, 180),
            rng.randint(30, 150),
            rng.choice([8, 10, 12, 15]),
            rng.choice([4, 5, 6]),
            rng.choice([300, 450, 600]),
        )
        income = adults * pa + kids * pk
        q = (
            f"A school play sells {adults} adult tickets at ${pa} each and {kids} child tickets at ${pk} each. "
            f"The costumes and set cost ${cost}. How much profit does the play make?"
        )
        return (
            q,
            [
                f"Adult tickets bring in {adults} × ${pa} = ${num(adults * pa)}.",
                f"Child tickets bring in {kids} × ${pk} = ${num(kids * pk)}.",
                f"Total income is ${num(adults * pa)} + ${num(kids * pk)} = ${num(income)}.",
                f"Profit is ${num(income)} − ${cost} = ${num(income - cost)}.",
            ],
            income - cost,
        )
    if kind == 2:
        km, days, per100, price = (
            rng.choice([20, 25, 30, 40]),
            rng.choice([4, 5]),
            rng.choice([5, 6, 8]),
            rng.choice([2, 3]),
        )
        week = 2 * km * days
        litres = week * per100 // 100
        q = (
            f"{name} drives {km} km to work and {km} km back, {days} days a week. The car uses {per100} litres of fuel per 100 km, "
            f"and fuel costs ${price} per litre. How much does {name} spend on fuel for commuting each week?"
        )
        if week * per100 % 100:
            return gsm_item(rng)
        return (
            q,
            [
                f"Each day is {km} × 2 = {2 * km} km, so a week is {2 * km} × {days} = {week} km.",
                f"That uses {week} ÷ 100 × {per100} = {litres} litres.",
                f"The cost is {litres} × ${price} = ${litres * price}.",
            ],
            litres * price,
        )
    if kind == 3:
        rows, plants, each, give = rng.randint(3, 8), rng.randint(4, 10), rng.randint(6, 15), rng.choice([2, 3, 4])
        total = rows * plants * each
        if total % give:
            return gsm_item(rng)
        q = (
            f"{name} has {rows} rows of tomato plants with {plants} plants in each row. Each plant produces {each} tomatoes. "
            f"{name} gives away 1/{give} of the tomatoes. How many tomatoes does {name} keep?"
        )
        return (
            q,
            [
                f"There are {rows} × {plants} = {rows * plants} plants.",
                f"They produce {rows * plants} × {each} = {num(total)} tomatoes.",
                f"{name} gives away {num(total)} ÷ {give} = {num(total // give)} tomatoes.",
                f"{name} keeps {num(total)} − {num(total // give)} = {num(total - total // give)} tomatoes.",
            ],
            total - total // give,
        )
    if kind == 4:
        shirts, sp, shoes, coupon = (
            rng.randint(2, 5),
            rng.choice([12, 15, 18, 20]),
            rng.choice([40, 60, 80]),
            rng.choice([10, 20]),
        )
        total = shirts * sp + shoes - coupon
        if total % 2:
            return gsm_item(rng)
        q = (
            f"{name} and a friend buy {shirts} shirts at ${sp} each and a pair of shoes for ${shoes}. They use a ${coupon} coupon "
            f"and split the bill equally. How much does each person pay?"
        )
        return (
            q,
            [
                f"The shirts cost {shirts} × ${sp} = ${shirts * sp}.",
                f"With the shoes the total is ${shirts * sp} + ${shoes} = ${shirts * sp + shoes}.",
                f"After the coupon it is ${shirts * sp + shoes} − ${coupon} = ${total}.",
                f"Each person pays ${total} ÷ 2 = ${total // 2}.",
            ],
            total // 2,
        )
    if kind == 5:
        wage, hours = rng.choice([16, 18, 20, 22, 24]), rng.randint(42, 52)
        over = hours - 40
        pay = 40 * wage + over * wage * 3 // 2
        if wage * 3 % 2:
            return gsm_item(rng)
        q = (
            f"{name} earns ${wage} an hour and is paid 1.5 times that rate for every hour over 40 in a week. "
            f"Last week {name} worked {hours} hours. How much did {name} earn?"
        )
        return (
            q,
            [
                f"Regular pay is 40 × ${wage} = ${num(40 * wage)}.",
                f"The overtime rate is ${wage} × 1.5 = ${wage * 3 // 2} per hour.",
                f"Overtime is {hours} − 40 = {over} hours, paying {over} × ${wage * 3 // 2} = ${over * wage * 3 // 2}.",
                f"Total pay is ${num(40 * wage)} + ${over * wage * 3 // 2} = ${num(pay)}.",
            ],
            pay,
        )
    if kind == 6:
        wd, we, weeks = rng.choice([10, 15, 20, 25]), rng.choice([30, 40, 50]), rng.randint(2, 6)
        per_week = 5 * wd + 2 * we
        pages = per_week * weeks
        q = (
            f"{name} reads {wd} pages on each weekday and {we} pages on each day of the weekend. "
            f"How many weeks will it take {name} to read a {num(pages)}-page book?"
        )
        return (
            q,
            [
                f"On weekdays {name} reads 5 × {wd} = {5 * wd} pages.",
                f"On the weekend {name} reads 2 × {we} = {2 * we} pages.",
                f"That is {5 * wd} + {2 * we} = {per_week} pages a week.",
                f"The book takes {num(pages)} ÷ {per_week} = {weeks} weeks.",
            ],
            weeks,
        )
    if kind == 7:
        fill, leak, minutes = rng.choice([12, 15, 20, 25]), rng.choice([2, 3, 5]), rng.randint(20, 90)
        cap = (fill - leak) * minutes
        q = (
            f"A water tank holds {num(cap)} litres. A pump fills it at {fill} litres per minute, but a leak loses {leak} litres per minute. "
            f"How many minutes does it take to fill the empty tank?"
        )
        return (
            q,
            [
                f"The tank gains {fill} − {leak} = {fill - leak} litres each minute.",
                f"It takes {num(cap)} ÷ {fill - leak} = {minutes} minutes to fill.",
            ],
            minutes,
        )
    if kind == 8:
        base, flour, people, bag = 4, rng.choice([250, 300, 350, 400]), rng.choice([12, 16, 20, 24, 28]), 1000
        need = flour * people // base
        bags = -(-need // bag)
        q = (
            f"A bread recipe for {base} people uses {flour} g of flour. {name} is baking for {people} people. "
            f"Flour comes in 1 kg bags. How many bags does {name} need to buy?"
        )
        return (
            q,
            [
                f"{people} people is {people} ÷ {base} = {people // base} times the recipe.",
                f"That needs {people // base} × {flour} = {num(need)} g of flour.",
                f"Each bag holds 1,000 g, so {name} needs {num(need)} ÷ 1,000 = {need / 1000:g}"
                + (f", rounded up to {bags} bags." if need % 1000 else " bags."),
            ],
            bags,
        )
    if kind == 9:
        students = rng.choice([24, 28, 30, 32, 36, 40])
        bus = rng.choice([2, 3, 4])
        if students % bus:
            return gsm_item(rng)
        rest = students - students // bus
        if rest % 2:
            return gsm_item(rng)
        walk = rest // 2
        q = (
            f"In a class of {students} students, 1/{bus} take the bus to school. Half of the remaining students walk, "
            f"and the rest are driven. How many students are driven to school?"
        )
        return (
            q,
            [
                f"{students} ÷ {bus} = {students // bus} students take the bus.",
                f"That leaves {students} − {students // bus} = {rest} students.",
                f"Half of them, {walk}, walk, so {rest} − {walk} = {rest - walk} are driven.",
            ],
            rest - walk,
        )
    if kind == 10:
        fee, allow, per, used = (
            rng.choice([25, 30, 35]),
            rng.choice([5, 10, 15]),
            rng.choice([4, 5, 10]),
            rng.randint(2, 8),
        )
        monthly = fee + used * per
        q = (
            f"{name}'s phone plan costs ${fee} a month and includes {allow} GB of data. Each extra GB costs ${per}. "
            f"If {name} uses {allow + used} GB every month, how much does the plan cost for a year?"
        )
        return (
            q,
            [
                f"{name} uses {allow + used} − {allow} = {used} extra GB a month.",
                f"The extra data costs {used} × ${per} = ${used * per} a month.",
                f"Each month costs ${fee} + ${used * per} = ${monthly}.",
                f"A year costs 12 × ${monthly} = ${num(12 * monthly)}.",
            ],
            12 * monthly,
        )
    if kind == 11:
        a, weeks, item = rng.choice([15, 20, 25, 30, 40]), rng.randint(8, 26), rng.choice([120, 180, 250, 300, 350])
        if a * weeks <= item:
            return gsm_item(rng)
        q = (
            f"{name} saves ${a} every week for {weeks} weeks and then buys a bike that costs ${item}. "
            f"How much money does {name} have left?"
        )
        return (
            q,
            [
                f"{name} saves {weeks} × ${a} = ${num(a * weeks)}.",
                f"After the bike, {name} has ${num(a * weeks)} − ${item} = ${num(a * weeks - item)} left.",
            ],
            a * weeks - item,
        )
    if kind == 12:
        cows, chickens = rng.randint(5, 30), rng.randint(10, 60)
        heads, legs = cows + chickens, 4 * cows + 2 * chickens
        q = f"A farm has cows and chickens. Together they have {heads} heads and {legs} legs. How many cows are there?"
        return (
            q,
            [
                f"If all {heads} animals were chickens, there would be {heads} × 2 = {2 * heads} legs.",
                f"There are {legs} − {2 * heads} = {legs - 2 * heads} extra legs.",
                f"Each cow adds 2 extra legs, so there are {legs - 2 * heads} ÷ 2 = {cows} cows.",
            ],
            cows,
        )
    if kind == 13:
        stock, pct, more = (
            rng.choice([200, 240, 400, 500, 800, 1200]),
            rng.choice([10, 20, 25, 30]),
            rng.randint(15, 60),
        )
        monday = stock * pct // 100
        left = stock - monday - more
        q = (
            f"A shop has {num(stock)} notebooks. On Monday it sells {pct}% of them, and on Tuesday it sells {more} more. "
            f"How many notebooks are left?"
        )
        return (
            q,
            [
                f"On Monday it sells {pct}% of {num(stock)} = {monday}.",
                f"After Monday there are {num(stock)} − {monday} = {num(stock - monday)} left.",
                f"After Tuesday there are {num(stock - monday)} − {more} = {num(left)} left.",
            ],
            left,
        )
    if kind == 14:
        d, k, w = rng.choice([3, 4, 5, 6]), rng.choice([1, 2]), rng.randint(4, 10)
        dists = [d + k * i for i in range(w)]
        q = (
            f"{name} runs {d} km in the first week of training and adds {k} km each week after that. "
            f"How many kilometres does {name} run in total over {w} weeks?"
        )
        return (
            q,
            [f"The weekly distances are {', '.join(map(str, dists))} km.", f"Their sum is {sum(dists)} km."],
            sum(dists),
        )
    people, slices, price = rng.randint(9, 30), rng.choice([2, 3]), rng.choice([11, 12, 14])
    pizzas = -(-people * slices // 8)
    q = (
        f"{people} people are coming to a party and each will eat {slices} slices of pizza. A pizza has 8 slices and costs ${price}. "
        f"How much will the pizzas cost?"
    )
    return (
        q,
        [
            f"They need {people} × {slices} = {people * slices} slices.",
            f"{people * slices} ÷ 8 = {people * slices / 8:g}, so they must buy {pizzas} pizzas.",
            f"The pizzas cost {pizzas} × ${price} = ${pizzas * price}.",
        ],
        pizzas * price,
    )


def make_gsm8k(seed, taken):
    """160 problems; commas group thousands in the working, never in the final '#### N'."""
    rng = rng_for(seed, "gsm8k")
    out = []
    while len(out) < 160:
        q, lines, ans = gsm_item(rng)
        if norm(q) in taken:
            continue
        taken.add(norm(q))
        out.append({"id": f"gsm-{len(out) + 1:04d}", "question": q, "answer": "\n".join(lines) + f"\n#### {ans}"})
    return out
