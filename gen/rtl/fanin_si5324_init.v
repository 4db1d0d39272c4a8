// fanin_si5324_init: programs the board's Si5324 jitter attenuator over I2C after reset,
// without a processor: an I2C master (standard mode, open drain, no clock stretching:
// neither the PCA9548 mux nor the Si5324 stretches) stepping through a ROM of bus writes.
//
// ROM entry: {start, stop, byte}. `start`: send START before the byte (the byte is then
// the address byte); `stop`: send STOP after the byte's ACK. Each write is
// START, address+W, register, value(s), STOP. A NACK anywhere ends the transfer with STOP;
// the whole ROM (mux selection included) is retried after RETRY_DELAY, at most MAX_TRIES
// times, after which `error` is set. After the last write `done` rises LOCK_DELAY later,
// the time allowed for the Si5324's self-calibration and lock (the ROM's last write
// starts it); `done` releases the transceivers' reset.
//
// Status poll (after `done`, every POLL_PERIOD cycles, the first at once): START,
// address+W, register STAT_REG, repeated START, address+R, one byte read from the device
// (the master releases SDA for it and answers NACK), STOP. `stat_valid` rises when every
// byte of a poll was acknowledged, and `lol` is then bit LOL_BIT of the byte read (the
// Si5324's LOL_INT). A NACK anywhere in a poll ends it with STOP and clears both
// (`stat_valid` = 0 also before the first poll); the next poll follows as usual, with no
// retry count and no effect on `done` or `error`. After `error` there is no poll.
//
// Bus timing at Q = CLK_HZ / (4 * I2C_HZ) clock cycles per quarter SCL period: SCL high
// 2Q, low 2Q, START hold 2Q, STOP setup 2Q, bus free 2Q before the next START
// (100 kHz: 5 us each, above the standard-mode minimums of 4.0 / 4.7 us); a repeated START
// has SDA high for 2Q with SCL high before it (set-up) and the START hold after it.
module fanin_si5324_init #(
    parameter CLK_HZ = 100000000,
    parameter I2C_HZ = 100000,
    // Cycles after reset before the first transfer (the Si5324 needs time after its reset).
    parameter START_DELAY = CLK_HZ / 50,
    // Cycles between a NACKed attempt and the retry.
    parameter RETRY_DELAY = CLK_HZ / 100,
    // Cycles after the last write before `done` (self-calibration and lock).
    parameter LOCK_DELAY = CLK_HZ,
    parameter MAX_TRIES = 8,
    // Cycles between the end of one status poll and the start of the next (100 ms).
    parameter POLL_PERIOD = CLK_HZ / 10
) (
    input  wire clk,
    input  wire rst,
    input  wire sda_i,
    // Open-drain drives: 1 pulls the line low, 0 releases it.
    output reg  scl_low = 1'b0,
    output reg  sda_low = 1'b0,
    output reg  done = 1'b0,
    output reg  error = 1'b0,
    // The last status poll: every byte acknowledged, and LOL_INT of the byte read (0
    // unless stat_valid).
    output reg  stat_valid = 1'b0,
    output reg  lol = 1'b0
);

// Timer loads for steps of Q and 2Q cycles (a step lasts its load + 1 cycles).
localparam [31:0] LD_Q = CLK_HZ / (4 * I2C_HZ) - 1;
localparam [31:0] LD_2Q = 2 * CLK_HZ / (4 * I2C_HZ) - 1;
localparam [3:0] LAST_TRY = MAX_TRIES - 1;

// ---- The ROM (generated from the register table in gen/src/board/si5324.rs).
localparam IDX_W = @IDX_W@;
localparam [IDX_W-1:0] ROM_LEN = @ROM_LEN@;
reg [IDX_W-1:0] idx = 0;
reg [9:0] rom;
always @* begin
    case (idx)
@ROM@
        default: rom = 10'h000;
    endcase
end
wire rom_start = rom[9];
wire rom_stop = rom[8];
wire [7:0] rom_byte = rom[7:0];

// ---- The status poll's bytes (generated from gen/src/board/si5324.rs): the device
// address, the status register and the bit of LOL_INT in it.
localparam [6:0] STAT_ADDR = @STAT_ADDR@;
localparam [7:0] STAT_REG = @STAT_REG@;
localparam [2:0] LOL_BIT = @LOL_BIT@;
// Poll byte index: address+W, register, address+R, the byte read.
localparam [1:0] P_ADDR_W = 2'd0, P_REG = 2'd1, P_ADDR_R = 2'd2, P_READ = 2'd3;
reg poll = 1'b0;
reg [1:0] pidx = P_ADDR_W;
wire rd = poll && pidx == P_READ;
reg [7:0] poll_byte;
always @* begin
    case (pidx)
        P_ADDR_W: poll_byte = {STAT_ADDR, 1'b0};
        P_REG: poll_byte = STAT_REG;
        P_ADDR_R: poll_byte = {STAT_ADDR, 1'b1};
        default: poll_byte = 8'h00; // P_READ: SDA released (rd)
    endcase
end
wire [7:0] tx_byte = poll ? poll_byte : rom_byte;
reg [7:0] rx = 8'd0;

// ---- Sequencer: when the timer `cnt` has run out, the current step acts, loads the
// next step's delay and moves on.
localparam [4:0]
    POWERUP = 5'd0,  // START_DELAY after reset
    NEXT = 5'd1,     // next ROM entry: START, lock wait, or done
    START = 5'd2,    // SDA low while SCL high
    START2 = 5'd3,   // SCL low
    BIT = 5'd4,      // SDA = data bit (released when reading) while SCL low
    BIT_HI = 5'd5,   // SCL released
    BIT_SMP = 5'd6,  // sample SDA (the bit read) in the middle of the high phase
    BIT_LO = 5'd7,   // SCL low; next bit or ACK
    ACK = 5'd8,      // SDA released while SCL low (the slave's ACK, or the master's NACK)
    ACK_HI = 5'd9,   // SCL released
    ACK_SMP = 5'd10, // sample SDA in the middle of the high phase
    ACK_LO = 5'd11,  // SCL low; STOP, next byte or repeated START
    STOP = 5'd12,    // SDA low while SCL low
    STOP_HI = 5'd13, // SCL released
    STOP_END = 5'd14,// SDA released while SCL high: STOP; bus free time follows
    LOCKED = 5'd15,  // done; the first status poll
    FAILED = 5'd16,  // error
    RSTART = 5'd17,  // repeated START: SDA released while SCL low
    RSTART_HI = 5'd18, // SCL released (START set-up), then START
    POLL_WAIT = 5'd19, // POLL_PERIOD between polls
    POLL = 5'd20;    // a status poll: START

reg [4:0] st = POWERUP;
reg [31:0] cnt = START_DELAY;
reg [2:0] bitn = 3'd7;
reg nack = 1'b0;
reg [3:0] tries = 4'd0;
(* ASYNC_REG = "TRUE" *) reg sda_cdc1 = 1'b1;
(* ASYNC_REG = "TRUE" *) reg sda_cdc2 = 1'b1;

always @(posedge clk) begin
    sda_cdc1 <= sda_i;
    sda_cdc2 <= sda_cdc1;
    if (rst) begin
        st <= POWERUP;
        cnt <= START_DELAY;
        idx <= 0;
        bitn <= 3'd7;
        nack <= 1'b0;
        tries <= 4'd0;
        scl_low <= 1'b0;
        sda_low <= 1'b0;
        done <= 1'b0;
        error <= 1'b0;
        poll <= 1'b0;
        pidx <= P_ADDR_W;
        stat_valid <= 1'b0;
        lol <= 1'b0;
    end else if (cnt != 32'd0) begin
        cnt <= cnt - 32'd1;
    end else begin
        case (st)
            POWERUP: st <= NEXT;
            NEXT: begin
                if (idx == ROM_LEN) begin
                    cnt <= LOCK_DELAY;
                    st <= LOCKED;
                end else if (rom_start) begin
                    st <= START;
                end else begin
                    // A ROM entry after a STOP must open a transfer (the generator checks).
                    st <= FAILED;
                end
            end
            START: begin
                sda_low <= 1'b1;
                cnt <= LD_2Q;
                st <= START2;
            end
            START2: begin
                scl_low <= 1'b1;
                bitn <= 3'd7;
                cnt <= LD_Q;
                st <= BIT;
            end
            BIT: begin
                sda_low <= rd ? 1'b0 : ~tx_byte[bitn];
                cnt <= LD_Q;
                st <= BIT_HI;
            end
            BIT_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_Q;
                st <= BIT_SMP;
            end
            BIT_SMP: begin
                rx <= {rx[6:0], sda_cdc2};
                cnt <= LD_Q;
                st <= BIT_LO;
            end
            BIT_LO: begin
                scl_low <= 1'b1;
                cnt <= LD_Q;
                if (bitn == 3'd0) begin
                    st <= ACK;
                end else begin
                    bitn <= bitn - 3'd1;
                    st <= BIT;
                end
            end
            ACK: begin
                sda_low <= 1'b0;
                cnt <= LD_Q;
                st <= ACK_HI;
            end
            ACK_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_Q;
                st <= ACK_SMP;
            end
            ACK_SMP: begin
                // Reading, SDA is the master's own NACK: not a refusal.
                nack <= sda_cdc2 && !rd;
                cnt <= LD_Q;
                st <= ACK_LO;
            end
            ACK_LO: begin
                scl_low <= 1'b1;
                cnt <= LD_Q;
                bitn <= 3'd7;
                if (nack || (poll ? pidx == P_READ : rom_stop)) begin
                    st <= STOP;
                end else if (!poll) begin
                    idx <= idx + 1'b1;
                    st <= BIT;
                end else begin
                    pidx <= pidx + 2'd1;
                    st <= pidx == P_REG ? RSTART : BIT;
                end
            end
            RSTART: begin
                sda_low <= 1'b0;
                cnt <= LD_Q;
                st <= RSTART_HI;
            end
            RSTART_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_2Q;
                st <= START;
            end
            STOP: begin
                sda_low <= 1'b1;
                cnt <= LD_Q;
                st <= STOP_HI;
            end
            STOP_HI: begin
                scl_low <= 1'b0;
                cnt <= LD_2Q;
                st <= STOP_END;
            end
            STOP_END: begin
                sda_low <= 1'b0;
                cnt <= LD_2Q;
                if (poll) begin
                    stat_valid <= !nack;
                    lol <= !nack && rx[LOL_BIT];
                    nack <= 1'b0;
                    st <= POLL_WAIT;
                end else if (!nack) begin
                    idx <= idx + 1'b1;
                    st <= NEXT;
                end else if (tries == LAST_TRY) begin
                    st <= FAILED;
                end else begin
                    // Retry from the first entry (the mux selection) after RETRY_DELAY.
                    tries <= tries + 4'd1;
                    nack <= 1'b0;
                    idx <= 0;
                    cnt <= RETRY_DELAY;
                    st <= NEXT;
                end
            end
            LOCKED: begin
                done <= 1'b1;
                st <= POLL;
            end
            POLL_WAIT: begin
                cnt <= POLL_PERIOD;
                st <= POLL;
            end
            POLL: begin
                poll <= 1'b1;
                pidx <= P_ADDR_W;
                st <= START;
            end
            default: error <= 1'b1;
        endcase
    end
end

endmodule // fanin_si5324_init
